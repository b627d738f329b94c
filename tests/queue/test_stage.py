"""Staging: sidecar first, idempotent per (session, agent), per-key locks."""

import concurrent.futures
import json
import multiprocessing
import os
import stat

import pytest

from abcd_daemon.config import Config
from abcd_daemon.errors import InputError
from abcd_daemon.queue.stage import stage
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta

from .conftest import SHA, T0

MAIN = CaptureMeta(session_id="sess-1", lineage_source="hook")


def sub(agent, **kw):
    return CaptureMeta(session_id="sess-1", agent_id=agent, agent_type="Explore",
                       lineage_source="hook", spawn_attribution="unattributed", **kw)


def test_stage_writes_raw_without_redacting_and_owner_only(lane, config):
    raw = b'{"token": "ghp_' + b"a" * 36 + b'"}\n'
    res = stage(lane, raw, MAIN, config=config, now_ns=T0)
    assert res.wrote and not res.replaced
    path = lane.staging / res.entry.name
    assert path.read_bytes() == raw
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(lane.staging.stat().st_mode) == 0o700
    assert res.entry.name == "20260101T000000.000000000Z-sess-1.raw"


def test_stage_writes_lineage_sidecar(lane, config):
    meta = CaptureMeta(session_id="sess-1", agent_id="a1b2c3d4", agent_type="Plan", spawn_depth=1,
                       parent_agent_id="", spawn_tool_use_id="toolu_9", lineage_source="hook",
                       spawn_attribution="sidecar")
    res = stage(lane, b"{}\n", meta, config=config, now_ns=T0, source_path="/x/agent-a1b2c3d4.jsonl",
                repo_root="/x")
    sidecar = json.loads((lane.staging / res.entry.name.replace(".raw", ".stage.json")).read_text())
    assert sidecar["schema"] == 1 and sidecar["session_id"] == "sess-1"
    assert sidecar["agent_id"] == "a1b2c3d4" and sidecar["spawn_depth"] == 1
    assert sidecar["spawn_tool_use_id"] == "toolu_9" and sidecar["spawn_attribution"] == "sidecar"
    assert sidecar["source_path"] == "/x/agent-a1b2c3d4.jsonl"
    assert sidecar["staged_at"] == "2026-01-01T00:00:00Z"
    assert res.entry.name.endswith("-a1b2c3d4.raw")


def test_list_staged_reads_sidecar_lineage(lane, config):
    stage(lane, b"{}\n", sub("agent-x", ), config=config, now_ns=T0)
    [entry] = list_staged(lane, now_ns=T0, ttl_s=config.staged_ttl_s)
    assert (entry.session_id, entry.agent_id, entry.agent_type) == ("sess-1", "agent-x", "Explore")
    assert not entry.legacy and not entry.error


def test_stage_is_idempotent_for_identical_bytes(lane, config):
    first = stage(lane, b"{}\n", MAIN, config=config, now_ns=T0)
    again = stage(lane, b"{}\n", MAIN, config=config, now_ns=T0 + 10**9)
    assert first.wrote and not again.wrote
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 1


def test_stage_replaces_stale_copy_in_place(lane, config):
    first = stage(lane, b"{}\n", MAIN, config=config, now_ns=T0)
    second = stage(lane, b"{}\n{}\n", MAIN, config=config, now_ns=T0 + 5 * 10**9)
    assert second.replaced and second.replaced_bytes == 3
    assert second.entry.name == first.entry.name  # queue position kept
    [entry] = list_staged(lane, now_ns=T0, ttl_s=1e9)
    assert (lane.staging / entry.name).read_bytes() == b"{}\n{}\n"


def test_stage_idempotency_is_per_session_and_agent(lane, config):
    stage(lane, b"same\n", MAIN, config=config, now_ns=T0)
    stage(lane, b"same\n", sub("a1"), config=config, now_ns=T0 + 1)
    stage(lane, b"same\n", sub("a2"), config=config, now_ns=T0 + 2)
    other = CaptureMeta(session_id="sess-2", lineage_source="hook")
    stage(lane, b"same\n", other, config=config, now_ns=T0 + 3)
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 4


def test_stage_refuses_empty_and_malformed_metadata_writing_nothing(lane, config):
    with pytest.raises(InputError, match="empty"):
        stage(lane, b"", MAIN, config=config, now_ns=T0)
    with pytest.raises(InputError):
        stage(lane, b"{}", CaptureMeta(session_id="../escape"), config=config, now_ns=T0)
    with pytest.raises(InputError):
        stage(lane, b"{}", MAIN, config=config, now_ns=T0, source_path="/a\nb")
    assert list_staged(lane, now_ns=T0, ttl_s=1e9) == []


def _stage_many(args):
    home_root, start, count = args
    from abcd_daemon.paths import Home

    lane = Lane(Home(home_root), SHA)
    for i in range(start, start + count):
        stage(lane, f'{{"agent": {i}}}\n'.encode(), sub(f"agent-{i:04d}"), config=Config(),
              now_ns=T0 + i)
    return count


def test_concurrent_sub_agent_stages_all_land_in_threads(lane, config):
    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(lambda i: stage(lane, f"{i}\n".encode(), sub(f"agent-{i:04d}"),
                                      config=config, now_ns=T0 + i), range(200)))
    entries = list_staged(lane, now_ns=T0, ttl_s=1e9)
    assert len(entries) == 200 and not any(e.error for e in entries)


def test_concurrent_sub_agent_stages_all_land_in_processes(lane, home):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        pool.map(_stage_many, [(str(home.root), i * 25, 25) for i in range(8)])
    entries = list_staged(lane, now_ns=T0, ttl_s=1e9)
    assert len(entries) == 200
    assert all((lane.staging / e.name).read_bytes() == f'{{"agent": {int(e.agent_id[6:])}}}\n'.encode()
               for e in entries)


def test_stage_concurrent_same_session_yields_one_copy(lane, config):
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: stage(lane, b"{}\n", MAIN, config=config, now_ns=T0 + i),
                                range(16)))
    assert sum(r.wrote for r in results) == 1
    assert len([n for n in os.listdir(lane.staging) if n.endswith(".raw")]) == 1


def test_a_sidecar_whose_raw_never_landed_is_dropped_by_the_next_stage_of_its_key(lane, config):
    lane.ensure("staging")
    orphan = lane.staging / "20260101T000000.000000000Z-agent-k.stage.json"
    orphan.write_text('{"schema":1,"session_id":"sess-1","staged_at":"2026-01-01T00:00:00Z"}')
    other = lane.staging / "20260101T000000.000000000Z-agent-z.stage.json"
    other.write_text('{"schema":1,"session_id":"sess-1","staged_at":"2026-01-01T00:00:00Z"}')
    stage(lane, b"{}\n", sub("agent-k"), config=config, now_ns=T0 + 5)
    assert not orphan.exists()  # killed between its two writes: debris of this key
    assert other.exists()  # another key's files are not this stage's business
    assert [e.agent_id for e in list_staged(lane, now_ns=T0, ttl_s=1e9)] == ["agent-k"]


def test_a_hook_staging_bytes_ingest_staged_first_replaces_the_lineage_in_place(lane, config):
    raw = b'{"type":"user"}\n'
    found = CaptureMeta(session_id="sess-1", agent_id="a1", agent_type="general-purpose",
                        lineage_source="ingest", spawn_attribution="unattributed")
    first = stage(lane, raw, found, config=config, now_ns=T0)
    hooked = stage(lane, raw, sub("a1"), config=config, now_ns=T0 + 1)
    assert hooked.wrote and hooked.entry.name == first.entry.name  # same queue position
    [entry] = list_staged(lane, now_ns=T0, ttl_s=config.staged_ttl_s)
    assert (entry.lineage_source, entry.agent_type) == ("hook", "Explore")
    # …and ingest coming back with the same bytes changes nothing.
    assert not stage(lane, raw, found, config=config, now_ns=T0 + 2).wrote
    [entry] = list_staged(lane, now_ns=T0, ttl_s=config.staged_ttl_s)
    assert entry.lineage_source == "hook"


def test_a_file_stage_of_other_bytes_over_a_hook_stage_keeps_the_payload_lineage(lane, config):
    """Ingest planned from a view of the store taken before the payload's stage landed;
    its longer copy replaces the bytes, never the hook's lineage."""
    hooked = stage(lane, b'{"type":"user"}\n', sub("a1"), config=config, now_ns=T0)
    found = CaptureMeta(session_id="sess-1", agent_id="a1", agent_type="general-purpose",
                        lineage_source="ingest", spawn_attribution="unattributed")
    grown = stage(lane, b'{"type":"user"}\n{"type":"assistant"}\n', found, config=config,
                  now_ns=T0 + 1)
    assert grown.wrote and grown.replaced and grown.entry.name == hooked.entry.name
    [entry] = list_staged(lane, now_ns=T0, ttl_s=config.staged_ttl_s)
    assert (entry.lineage_source, entry.agent_type, entry.bytes) == ("hook", "Explore", 37)
