"""The drain: staged entries become records, or stay staged, or are quarantined."""

from __future__ import annotations

import json
import os
import stat

from abcd_daemon.config import Config, DrainBudget
from abcd_daemon.queue.drain import drain_pass
from abcd_daemon.queue.scanners import ScannerPool
from abcd_daemon.queue.stage import stage
from abcd_daemon.queue.staged import list_quarantined, list_staged
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, read_body

from .conftest import DAY_NS, T0

LINE = b'{"type":"user","message":{"role":"user","content":"hi"}}\n'
from ..conftest import NEVER_CONVERGES as SELF_MATCHING


def drain(lanes, config=None, budget=DrainBudget(), now=T0):
    config = config or Config()
    return drain_pass(lanes, budget, scanners=ScannerPool(config), config=config,
                      now_ns=lambda: now)


def sub(agent, **kw):
    return CaptureMeta(session_id="sess", agent_id=agent, lineage_source="hook",
                       spawn_attribution=kw.pop("spawn_attribution", "unattributed"), **kw)


def test_drain_captures_redacted_and_removes_staged(lane, config):
    stage(lane, LINE, CaptureMeta(session_id="sess", lineage_source="hook"), config=config, now_ns=T0)
    result = drain([lane])
    assert len(result.captured) == 1 and not result.failed
    assert list_staged(lane, now_ns=T0, ttl_s=1e9) == []
    assert [n for n in os.listdir(lane.staging) if not n.startswith(".")] == []
    assert len(os.listdir(lane.stage_locks)) <= 64  # a fixed stripe, never one per entry


def test_drain_carries_sidecar_lineage_into_the_record(lane, config):
    meta = CaptureMeta(session_id="sess", agent_id="a1b2", agent_type="Explore", spawn_depth=2,
                       parent_agent_id="p9", spawn_tool_use_id="toolu_1", lineage_source="hook",
                       spawn_attribution="sidecar")
    stage(lane, LINE, meta, config=config, now_ns=T0)
    drain([lane])
    [rec] = list_records(lane)
    assert (rec.agent_id, rec.agent_type, rec.spawn_depth, rec.parent_agent_id,
            rec.spawn_tool_use_id, rec.lineage_source, rec.spawn_attribution) == (
        "a1b2", "Explore", 2, "p9", "toolu_1", "hook", "sidecar")


def test_legacy_staged_file_without_sidecar_still_drains(lane):
    lane.ensure("staging")
    (lane.staging / "20260101T000000.000000000Z-legacy-sess.raw").write_bytes(LINE)
    result = drain([lane])
    assert [r.session_id for r in result.captured] == ["legacy-sess"]
    assert list_records(lane)[0].is_main_thread


def test_corrupt_sidecar_is_reported_every_pass_and_never_drained(lane, config):
    res = stage(lane, LINE, sub("a1"), config=config, now_ns=T0)
    (lane.staging / res.entry.name.replace(".raw", ".stage.json")).write_text("{not json")
    for _ in range(2):
        result = drain([lane])
        assert len(result.failed) == 1 and not result.failed[0].permanent
        assert not result.captured
    assert (lane.staging / res.entry.name).exists()
    assert list_quarantined(lane) == []


def test_drain_rereads_a_longer_source(lane, config, tmp_path):
    source = tmp_path / "agent-a1.jsonl"
    source.write_bytes(LINE + b'{"partial": tr')  # staged before the harness flushed
    stage(lane, source.read_bytes(), sub("a1"), config=config, now_ns=T0, source_path=str(source))
    source.write_bytes(LINE + b'{"partial": true}\n')
    result = drain([lane])
    assert result.extended == 1
    assert read_body(lane, list_records(lane)[0]) == LINE + b'{"partial": true}\n'


def test_drain_ignores_a_divergent_source(lane, config, tmp_path):
    source = tmp_path / "agent-a1.jsonl"
    stage(lane, LINE, sub("a1"), config=config, now_ns=T0, source_path=str(source))
    source.write_bytes(b'{"recycled path": "another transcript entirely"}\n' * 3)
    result = drain([lane])
    assert result.extended == 0
    assert read_body(lane, list_records(lane)[0]) == LINE


def test_retryable_failure_stays_staged_and_retryable(lane, home):
    broken = Config(scanner_additions=({"name": "b", "severity": "hard_fail", "keywords": ["x"], "regex": "("},))
    stage(lane, LINE, CaptureMeta(session_id="sess"), config=broken, now_ns=T0)
    result = drain([lane], config=broken)
    assert len(result.failed) == 1 and not result.failed[0].permanent
    assert "degraded" in result.failed[0].error
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 1
    result = drain([lane])  # repaired configuration: the same entry now stores
    assert len(result.captured) == 1


def test_deterministic_refusal_is_quarantined_not_retried_forever(lane):
    config = Config(scanner_additions=(SELF_MATCHING,))
    stage(lane, b'{"x":"abcdefghijklmnopQQ"}\n', CaptureMeta(session_id="sess"), config=config, now_ns=T0)
    first = drain([lane], config=config)
    assert first.failed[0].permanent and first.failed[0].quarantined
    assert drain([lane], config=config).failed == []  # out of the queue: nothing retries it
    [q] = list_quarantined(lane)
    assert "blocking span" in q.reason and "abcdefghijklmnop" not in q.reason


def test_quarantine_holds_unredacted_text_at_owner_only_modes(lane):
    config = Config(scanner_additions=(SELF_MATCHING,))
    raw = b'{"x":"abcdefghijklmnopQQ"}\n'
    stage(lane, raw, CaptureMeta(session_id="sess"), config=config, now_ns=T0)
    drain([lane], config=config)
    [q] = list_quarantined(lane)
    assert open(q.path, "rb").read() == raw  # moved, byte for byte
    assert stat.S_IMODE(os.stat(q.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(q.reason_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(lane.quarantine).st_mode) == 0o700
    assert json.load(open(q.reason_path))["session_id"] == "sess"


def test_overdue_entry_is_never_deleted_by_age(lane, config):
    broken = Config(scanner_additions=({"name": "b", "severity": "hard_fail", "keywords": ["x"], "regex": "("},))
    stage(lane, LINE, CaptureMeta(session_id="old"), config=config, now_ns=T0)
    result = drain([lane], config=broken, now=T0 + 400 * DAY_NS)
    assert result.overdue == 1 and result.failed
    [entry] = list_staged(lane, now_ns=T0 + 400 * DAY_NS, ttl_s=config.staged_ttl_s)
    assert entry.overdue and (lane.staging / entry.name).read_bytes() == LINE


def test_drain_budget_leaves_remainder_loudly(lane, config):
    for i in range(5):
        stage(lane, LINE, CaptureMeta(session_id=f"s{i}"), config=config, now_ns=T0 + i)
    result = drain([lane], budget=DrainBudget(max_count=2))
    assert len(result.captured) == 2 and result.remaining == 3
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 3


def test_drain_takes_the_main_thread_first_under_a_budget(lane, config):
    stage(lane, LINE, sub("a1"), config=config, now_ns=T0)
    stage(lane, LINE, CaptureMeta(session_id="sess"), config=config, now_ns=T0 + 1)
    result = drain([lane], budget=DrainBudget(max_count=1))
    assert [r.agent_id for r in result.captured] == [""]


def test_a_restaged_copy_mid_drain_is_left_for_the_next_pass(lane, config, monkeypatch):
    from abcd_daemon.queue import drain as drain_mod

    stage(lane, LINE, CaptureMeta(session_id="sess"), config=config, now_ns=T0)
    real_capture = drain_mod.capture_file

    def capture_then_restage(*args, **kwargs):
        out = real_capture(*args, **kwargs)
        stage(lane, LINE + LINE, CaptureMeta(session_id="sess"), config=config, now_ns=T0 + 5)
        return out

    monkeypatch.setattr(drain_mod, "capture_file", capture_then_restage)
    drain([lane])
    [entry] = list_staged(lane, now_ns=T0, ttl_s=1e9)
    assert (lane.staging / entry.name).read_bytes() == LINE + LINE
    monkeypatch.setattr(drain_mod, "capture_file", real_capture)
    drain([lane])
    assert read_body(lane, list_records(lane)[0]) == LINE + LINE


def test_a_stored_outcome_names_the_records_it_superseded(lane, config):
    from abcd_daemon.queue.drain import drain_entry

    def drain_one(data: bytes, at: int):
        stage(lane, data, CaptureMeta(session_id="sess", lineage_source="hook"), config=config, now_ns=at)
        [entry] = list_staged(lane, now_ns=at, ttl_s=1e9)
        return drain_entry(lane, entry.name, scanners=ScannerPool(config), config=config, now_ns=at)

    first = drain_one(LINE, T0)
    assert first.status == "stored" and first.superseded == []
    second = drain_one(LINE + LINE, T0 + 5)
    assert second.status == "stored" and second.superseded == [first.record.name]
    assert [r.name for r in list_records(lane)] == [second.record.name]
