"""Coverage: every harness transcript not stored is listed once, with the first reason
that applies and the days before the harness's retention deletes it."""

import json
import os
import time

from abcd_daemon.config import Config
from abcd_daemon.ingest import drain_lanes, ingest, ingest_file
from abcd_daemon.ingest.missing import summarise, survey_missing
from abcd_daemon.queue.quarantine import file_identity, quarantine
from abcd_daemon.queue.scanners import ScannerPool
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane

from .conftest import aged_transcript, write_jsonl

CONFIG = Config(watch_settle_s=5.0, max_transcript_bytes=64 << 20)  # the cap is a setting


def survey(home, root):
    return survey_missing(home, [str(root)], config=CONFIG, now_ns=time.time_ns())


def by_name(report):
    return {os.path.basename(i.path): i for i in report.items}


def test_a_stored_transcript_is_not_listed_until_it_changes(home, repo, claude_dir):
    root = claude_dir / "projects"
    main = aged_transcript(root / "-repo" / "s1.jsonl", "s1", repo[0])
    report = ingest(home, [str(root)], config=CONFIG, now_ns=time.time_ns())
    drain_lanes([Lane(home, repo[1])], scanners=ScannerPool(CONFIG), config=CONFIG)
    first = survey(home, root)
    assert (first.checked, first.stored, first.items) == (1, 1, [])
    assert report.staged
    aged_transcript(main, "s1", repo[0], n=5, age_s=0.0)  # resumed: now longer than its record
    assert by_name(survey(home, root))["s1.jsonl"].reason == "settling"


def test_each_reason_is_given_once_per_aged_transcript(home, repo, claude_dir, tmp_path):
    root = claude_dir / "projects"
    path, sha = repo
    nowhere = tmp_path / "no-repo"
    nowhere.mkdir()
    aged_transcript(root / "-repo" / "pending.jsonl", "pending", path)
    aged_transcript(root / "-repo" / "busy.jsonl", "busy", path, age_s=0.0)
    aged_transcript(root / "-no-repo" / "orphan.jsonl", "orphan", nowhere)
    aged_transcript(root / "-repo" / "queued.jsonl", "queued", path)
    ingest_file(home, str(root / "-repo" / "queued.jsonl"), config=CONFIG, now_ns=time.time_ns())
    aged_transcript(root / "-repo" / "bad.jsonl", "bad", path)
    ingest_file(home, str(root / "-repo" / "bad.jsonl"), config=CONFIG, now_ns=time.time_ns())
    lane = Lane(home, sha)
    [entry] = [e for e in list_staged(lane, now_ns=time.time_ns(), ttl_s=1e9) if e.session_id == "bad"]
    quarantine(lane, entry, file_identity(entry.path), "a blocking span survived redaction",
               config=CONFIG, now_ns=time.time_ns())
    os.symlink(root / "-repo" / "pending.jsonl", root / "-repo" / "linked.jsonl")
    big = root / "-repo" / "huge.jsonl"
    with open(big, "wb") as f:
        f.truncate(65 << 20)  # sparse: over the configured cap without writing it
    write_jsonl(root / "-repo" / "title.jsonl", [{"type": "summary", "summary": "a title"}])
    items = by_name(survey(home, root))
    reasons = {name: item.reason for name, item in items.items()}
    assert reasons == {"pending.jsonl": "pending", "busy.jsonl": "settling", "orphan.jsonl": "no-repository",
                       "queued.jsonl": "staged", "bad.jsonl": "refused", "linked.jsonl": "refused",
                       "huge.jsonl": "over-cap"}
    assert "blocking span" in items["bad.jsonl"].detail and "symlink" in items["linked.jsonl"].detail
    assert items["pending.jsonl"].root_sha == sha and items["orphan.jsonl"].root_sha == ""
    assert items["queued.jsonl"].root_sha == sha


def test_days_left_follow_the_harness_s_cleanup_period_and_the_soonest_comes_first(home, repo, claude_dir):
    root = claude_dir / "projects"
    (claude_dir / "settings.json").parent.mkdir(parents=True, exist_ok=True)
    (claude_dir / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 10}))
    aged_transcript(root / "-repo" / "young.jsonl", "young", repo[0], age_s=86400)
    aged_transcript(root / "-repo" / "old.jsonl", "old", repo[0], age_s=8 * 86400)
    report = survey(home, root)
    assert [(os.path.basename(i.path), i.days_left) for i in report.items] == [("old.jsonl", 2),
                                                                             ("young.jsonl", 9)]
    summary = summarise(report, now_ns=time.time_ns())
    assert (summary.total, summary.reasons, summary.soonest_days_left) == (2, {"pending": 2}, 2)


def test_the_ledger_spares_reading_what_it_knows_and_never_claims_a_file_stored(home, repo, claude_dir):
    from abcd_daemon.ingest.catchup import catch_up
    from abcd_daemon.ingest.ledger import Ledger

    root = claude_dir / "projects"
    aged_transcript(root / "-repo" / "s1.jsonl", "s1", repo[0])
    ledger = Ledger(home)
    catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    report = survey_missing(home, [str(root)], config=CONFIG, now_ns=time.time_ns(), ledger=ledger)
    assert [i.reason for i in report.items] == ["staged"]  # handed over, not yet a record
    drain_lanes([Lane(home, repo[1])], scanners=ScannerPool(CONFIG), config=CONFIG)
    assert survey_missing(home, [str(root)], config=CONFIG, now_ns=time.time_ns(), ledger=ledger).items == []


def test_one_repository_s_view_leaves_the_others_out(home, repo, claude_dir, tmp_path):
    root = claude_dir / "projects"
    nowhere = tmp_path / "no-repo"
    nowhere.mkdir()
    aged_transcript(root / "-repo" / "mine.jsonl", "mine", repo[0])
    aged_transcript(root / "-no-repo" / "orphan.jsonl", "orphan", nowhere)
    report = survey(home, root)
    assert [os.path.basename(i.path) for i in report.only_lane(repo[1]).items] == ["mine.jsonl"]
    assert len(report.items) == 2


def test_an_absent_harness_store_has_nothing_missing(home, claude_dir):
    report = survey(home, claude_dir / "projects")
    assert (report.checked, report.items) == (0, [])


def test_a_followed_session_outside_the_roots_is_accounted_for(home, repo, tmp_path):
    main = aged_transcript(tmp_path / "elsewhere" / "-repo" / "s7.jsonl", "s7", repo[0])
    report = survey_missing(home, [], config=CONFIG, now_ns=time.time_ns(), followed=[str(main)])
    assert [(os.path.basename(i.path), i.reason, i.days_left) for i in report.items] == [
        ("s7.jsonl", "pending", None)]  # no projects folder above it: retention unknown
