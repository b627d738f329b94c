"""The drain on streams: an entry over a cap stays staged with its reason (the cap is a
setting, so it is retried, never quarantined), a pass still makes progress past it,
and a longer source is compared and captured without loading either file."""

from __future__ import annotations

import dataclasses

from abcd_daemon.config import Config, DrainBudget
from abcd_daemon.queue.drain import drain_pass
from abcd_daemon.queue.scanners import ScannerPool
from abcd_daemon.queue.stage import stage
from abcd_daemon.queue.staged import list_quarantined, list_staged
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, read_body

from .conftest import T0

LINE = b'{"type":"user","message":{"role":"user","content":"hi"}}\n'
LONG = b'{"type":"user","message":{"content":"' + b"w" * 6000 + b'"}}\n'


def drain(lanes, config, budget=DrainBudget()):
    return drain_pass(lanes, budget, scanners=ScannerPool(config), config=config,
                      now_ns=lambda: T0)


def test_an_entry_over_the_line_cap_stays_staged_with_the_reason_and_is_not_quarantined(lane):
    tight = dataclasses.replace(Config(), max_line_bytes=4096)
    stage(lane, LINE + LONG, CaptureMeta(session_id="sess"), config=tight, now_ns=T0)
    result = drain([lane], tight)
    [failure] = result.failed
    assert "4096-byte line cap (max_line_bytes)" in failure.error and not failure.permanent
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 1
    assert list_quarantined(lane) == [] and list_records(lane) == []
    assert len(drain([lane], Config()).captured) == 1  # the cap raised: stored


def test_a_pass_makes_progress_past_an_over_cap_entry(lane):
    tight = dataclasses.replace(Config(), max_line_bytes=4096)
    stage(lane, LONG, CaptureMeta(session_id="big"), config=tight, now_ns=T0)
    stage(lane, LINE, CaptureMeta(session_id="small"), config=tight, now_ns=T0 + 1)
    result = drain([lane], tight, DrainBudget(max_bytes=1, max_count=0))
    assert result.attempted == 1 and len(result.failed) == 1  # the first entry, always
    result = drain([lane], tight, DrainBudget(max_bytes=0, max_count=0))
    assert [r.session_id for r in result.captured] == ["small"]


def test_a_staged_entry_over_the_file_cap_stays_staged_and_says_which_setting(lane):
    stage(lane, LINE * 200, CaptureMeta(session_id="sess"), config=Config(), now_ns=T0)
    tight = dataclasses.replace(Config(), max_transcript_bytes=4096)
    [failure] = drain([lane], tight).failed
    assert "max_transcript_bytes" in failure.error and not failure.permanent
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 1


def test_a_longer_source_is_taken_by_length_and_counted_extended(lane, tmp_path):
    source = tmp_path / "t.jsonl"
    source.write_bytes(LINE * 3000)
    stage(lane, LINE * 1000, CaptureMeta(session_id="sess"), config=Config(), now_ns=T0,
          source_path=str(source))
    config = dataclasses.replace(Config(), capture_chunk_bytes=64 * 1024)
    result = drain([lane], config)
    assert result.extended == 1
    [record] = list_records(lane)
    assert read_body(lane, record).count(b"\n") == 3000
