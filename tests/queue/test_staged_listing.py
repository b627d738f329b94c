"""Listing staged entries: legacy, broken, hostile and overdue entries."""

import os

from abcd_daemon.queue.stage import stage
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.meta import CaptureMeta

from .conftest import DAY_NS, T0

TTL = 7 * 86400.0


def test_legacy_raw_without_sidecar_is_a_main_thread_named_by_its_file(lane):
    lane.ensure("staging")
    (lane.staging / "20260101T000000.000000000Z-5a9221e2-aaaa.raw").write_bytes(b"{}\n")
    [entry] = list_staged(lane, now_ns=T0, ttl_s=TTL)
    assert entry.legacy and entry.session_id == "5a9221e2-aaaa" and entry.is_main_thread
    assert not entry.error


def test_corrupt_sidecar_is_not_treated_as_legacy(lane, config):
    res = stage(lane, b"{}\n", CaptureMeta(session_id="s", agent_id="a1", spawn_attribution="unattributed"),
                config=config, now_ns=T0)
    sidecar = lane.staging / res.entry.name.replace(".raw", ".stage.json")
    sidecar.write_bytes(b'{"schema": 1, "session_id": "s", "staged_at": "2026-01-01T00:00:00Z", "agent_id": ')
    [entry] = list_staged(lane, now_ns=T0, ttl_s=TTL)
    assert entry.error and "does not parse" in entry.error
    assert entry.session_id == "" and not entry.legacy


def test_sidecar_with_unknown_schema_is_reported(lane, config):
    res = stage(lane, b"{}\n", CaptureMeta(session_id="s"), config=config, now_ns=T0)
    sidecar = lane.staging / res.entry.name.replace(".raw", ".stage.json")
    sidecar.write_text('{"schema": 7, "session_id": "s", "staged_at": "2026-01-01T00:00:00Z"}')
    [entry] = list_staged(lane, now_ns=T0, ttl_s=TTL)
    assert "schema 7" in entry.error


def test_sidecar_naming_a_path_as_session_is_reported(lane, config):
    res = stage(lane, b"{}\n", CaptureMeta(session_id="s"), config=config, now_ns=T0)
    sidecar = lane.staging / res.entry.name.replace(".raw", ".stage.json")
    sidecar.write_text('{"schema": 1, "session_id": "../../etc", "staged_at": "2026-01-01T00:00:00Z"}')
    [entry] = list_staged(lane, now_ns=T0, ttl_s=TTL)
    assert "not a usable id" in entry.error


def test_symlinked_and_fifo_staged_entries_are_reported_not_drained(lane, tmp_path):
    lane.ensure("staging")
    target = tmp_path / "elsewhere"
    target.write_text("{}")
    os.symlink(target, lane.staging / "20260101T000000.000000000Z-s1.raw")
    os.mkfifo(lane.staging / "20260101T000000.000000001Z-s2.raw")
    entries = list_staged(lane, now_ns=T0, ttl_s=TTL)
    assert len(entries) == 2 and all("not a regular file" in e.error for e in entries)


def test_staged_entry_past_the_limit_reports_overdue(lane, config):
    stage(lane, b"{}\n", CaptureMeta(session_id="old"), config=config, now_ns=T0)
    stage(lane, b"{}\n", CaptureMeta(session_id="new"), config=config, now_ns=T0 + 7 * DAY_NS)
    entries = {e.session_id: e for e in list_staged(lane, now_ns=T0 + 7 * DAY_NS + 1, ttl_s=TTL)}
    assert entries["old"].overdue and not entries["new"].overdue


def test_listing_ignores_lock_dirs_and_temp_files(lane, config):
    stage(lane, b"{}\n", CaptureMeta(session_id="s"), config=config, now_ns=T0)
    (lane.staging / ".abcd-tmp-xyz").write_bytes(b"partial")
    assert [e.session_id for e in list_staged(lane, now_ns=T0, ttl_s=TTL)] == ["s"]
