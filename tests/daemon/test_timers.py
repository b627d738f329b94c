"""The daemon's timers, in-process under trio's mock clock: what wakes the loops when
nothing rings (the periodic sweep, the drain timer, the retry back-off).

The clock auto-jumps to the next deadline once no task has run for ``JUMP_AFTER`` real
seconds — not instantly (``autojump_clock``), because the daemon's work runs in worker
threads, and a clock that jumped while a thread ran would fire timeouts no real daemon
would see. So minutes of daemon time pass in a second or two of test time."""

from __future__ import annotations

import json
import os

import pytest
import trio

from abcd_daemon.config import Config
from abcd_daemon.paths import Home
from abcd_daemon.server.app import run_daemon
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo

LINE = b'{"type":"user","message":{"role":"user","content":"hello"}}\n'


def spool_directly(home: Home, name: str, event: str, payload: dict, cwd: str) -> None:
    """What a shim writes, without ringing: as if its doorbell never got through."""
    home.spool_new.mkdir(parents=True, exist_ok=True)
    header = json.dumps({"abcd_spool": 1, "event": event, "cwd": cwd}).encode()
    (home.spool_new / name).write_bytes(header + b"\n" + json.dumps(payload).encode())


JUMP_AFTER = 0.3


@pytest.fixture
def clock(mock_clock):
    mock_clock.autojump_threshold = JUMP_AFTER
    return mock_clock


async def wait_until(predicate, seconds: float, poll: float = 100.0) -> bool:
    """Poll ``predicate`` every ``poll`` seconds of trio time, for at most ``seconds``."""
    with trio.move_on_after(seconds):
        while not await trio.to_thread.run_sync(predicate):
            await trio.sleep(poll)
        return True
    return False


async def test_the_periodic_sweep_takes_a_payload_whose_doorbell_never_rang(
        home, tmp_path, clock):
    sha = make_repo(tmp_path / "repo")
    transcript = tmp_path / "s1.jsonl"
    transcript.write_bytes(LINE)
    config = Config(sweep_interval_s=600, drain_interval_s=600)
    async with trio.open_nursery() as nursery:
        daemon = await nursery.start(run_daemon, home, config)
        spool_directly(home, "00000000000000000001-1-x.json", "session-end",
                       {"session_id": "s1", "transcript_path": str(transcript)}, str(tmp_path / "repo"))
        lane = Lane(home, sha)
        # No doorbell: the next periodic sweep (600 s of daemon time) must take it. (The
        # spool watcher could ring too; either way a payload nobody announced is taken.)
        start = trio.current_time()
        assert await wait_until(lambda: len(list_records(lane)) == 1, 1300)
        assert trio.current_time() - start <= 1300
        assert not os.listdir(home.spool_new)
        daemon.stopping.set()
        nursery.cancel_scope.cancel()


async def test_a_retryable_failure_is_retried_after_the_drain_interval(
        home, tmp_path, clock):
    sha = make_repo(tmp_path / "repo")
    transcript = tmp_path / "s2.jsonl"
    transcript.write_bytes(LINE)
    config = Config(drain_interval_s=300, sweep_interval_s=30)
    home.root.mkdir(parents=True, exist_ok=True)
    lane = Lane(home, sha)
    async with trio.open_nursery() as nursery:
        daemon = await nursery.start(run_daemon, home, config)
        broken = daemon.scanners.get  # the scanner breaks, then is repaired

        def degraded(repo_root=""):
            from abcd_daemon.scanner import Identity, build_scanner

            return build_scanner(Identity(home="/nowhere", user="x"),
                                 [{"name": "b", "severity": "hard_fail", "keywords": ["x"], "regex": "("}])

        daemon.scanners.get = degraded
        spool_directly(home, "00000000000000000002-1-x.json", "session-end",
                       {"session_id": "s2", "transcript_path": str(transcript)}, str(tmp_path / "repo"))
        daemon.ring()
        assert await wait_until(lambda: daemon.stats.last_pass is not None
                                and daemon.stats.last_pass.failed == 1, 120, poll=5)
        assert list_records(lane) == [] and len(list(lane.staging.glob("*.raw"))) == 1
        daemon.scanners.get = broken
        # Not retried at once (back-off), but within one drain interval of daemon time.
        failed_at = trio.current_time()
        daemon.ring()
        await wait_until(lambda: False, 60, poll=5)  # a minute later: still backing off
        assert list_records(lane) == []
        assert await wait_until(lambda: len(list_records(lane)) == 1, 700, poll=50)
        assert trio.current_time() - failed_at >= 300
        assert daemon.stats.stored_total == 1
        daemon.stopping.set()
        nursery.cancel_scope.cancel()
