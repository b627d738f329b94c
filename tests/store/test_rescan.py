"""`history rescan` re-redacts what an older rule table stored; `forget` purges a record."""

from __future__ import annotations

import pytest

from abcd_daemon.config import Config
from abcd_daemon.errors import AbcdError
from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.scanner.engine import Scanner
from abcd_daemon.scanner.bundled import BUNDLED_RULES
from abcd_daemon.store.capture import capture
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, read_body
from abcd_daemon.store.rescan import forget, rescan_lane, stale

SHA = "c" * 40
GITLAB = "glpat-" + "a1B2c3D4e5F6g7H8i9J0"
RAW = ('{"type":"user","message":{"content":"see ' + GITLAB + ' now"}}\n').encode()


@pytest.fixture
def current(tmp_path):
    return build_scanner(Identity(home=str(tmp_path / "nobody-home"), user="nobody-home"))


@pytest.fixture
def old_table(current):
    """The hand-typed table this round replaced: no provider ruleset, no generic detectors."""
    own = [r for r in current.rules if r.name in {b.name for b in BUNDLED_RULES}]
    return Scanner(own, current._ctx, label="abcd-table 3")


@pytest.fixture
def lane(home, old_table):
    lane = Lane(home, SHA)
    capture(lane, RAW, CaptureMeta(session_id="sess"), scanner=old_table, config=Config(), now_ns=1_767_225_600 * 10**9)
    return lane


def test_a_record_the_old_table_stored_leaks_what_the_new_one_masks(lane):
    (record,) = list_records(lane)
    assert record.scanner == "abcd-table 3"
    assert GITLAB.encode() in read_body(lane, record)


def test_rescan_rewrites_the_record_in_place_with_the_new_scanner(lane, current):
    (before,) = list_records(lane)
    report = rescan_lane(lane, scanner=current, lock_timeout_s=5)
    assert (report.checked, report.rewritten, report.refused) == (1, 1, [])
    assert report.newly_masked == {"betterleaks.gitlab-pat": 1}
    (after,) = list_records(lane)
    assert after.name == before.name and after.source_sha256 == before.source_sha256
    assert after.scanner == current.label
    assert after.redacted_secrets == before.redacted_secrets + 1
    assert GITLAB[8:].encode() not in read_body(lane, after)
    assert stale(list_records(lane), current.label) == []


def test_a_second_rescan_skips_records_already_current(lane, current):
    rescan_lane(lane, scanner=current, lock_timeout_s=5)
    report = rescan_lane(lane, scanner=current, lock_timeout_s=5)
    assert (report.checked, report.current, report.rewritten) == (1, 1, 0)


def test_a_dry_run_counts_but_writes_nothing(lane, current):
    (before,) = list_records(lane)
    data = (lane.records / before.name).read_bytes()
    report = rescan_lane(lane, scanner=current, lock_timeout_s=5, dry_run=True)
    assert report.rewritten == 1
    assert (lane.records / before.name).read_bytes() == data


def test_forget_removes_the_record_for_good(lane):
    (record,) = list_records(lane)
    gone = forget(lane, "sess", lock_timeout_s=5)
    assert gone.name == record.name
    assert list_records(lane) == []
    with pytest.raises(AbcdError):
        forget(lane, "sess", lock_timeout_s=5)


def test_the_survey_counts_records_an_older_scanner_redacted(lane, current, home):
    from abcd_daemon.store.rescan import stale_survey

    label, count = stale_survey(home)
    assert label == current.label and count == 1
    rescan_lane(lane, scanner=current, lock_timeout_s=5)
    assert stale_survey(home) == (current.label, 0)


def test_the_session_start_notice_offers_the_rescan():
    import json
    import os
    from pathlib import Path

    from abcd_daemon import shim
    from abcd_daemon.paths import STATUS_FILE

    status_path = Path(os.environ["ABCD_HOME"]) / STATUS_FILE
    status_path.parent.mkdir(parents=True, exist_ok=True)
    status_path.write_text(json.dumps({"scanner": "kingfisher 9 + abcd 9", "stale_records": 3}))
    notice = shim.backlog_notice()
    assert "3 stored record(s) were redacted by an older scanner" in notice
    assert "abcd history rescan --all-repos" in notice
