"""Followed sessions (FileWatch): polled, settled like a watched root's, dropped when
deleted or long idle; nothing polled while nothing is followed. Real files, trio."""

import json
import time
from functools import partial

import trio

from abcd_daemon.ingest.live import FileWatch

from .conftest import claude_line

SETTLE = 0.3


class Follow:
    def __init__(self, **kw):
        self.calls, self.events, self.stop = [], [], trio.Event()
        self.watch = FileWatch(settle_s=SETTLE, on_settled=self.calls.append, stop_event=self.stop,
                               report=self.events.append, poll_s=0.05, **kw)

    def kinds(self, kind):
        return [e.path for e in self.events if e.kind == kind]

    async def until(self, predicate, timeout=10.0):
        with trio.fail_after(timeout):
            while not predicate():
                await trio.sleep(0.02)


def append(path, n, agent=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(claude_line("s1", "/repo", n, agent=agent)) + "\n")


async def test_a_followed_session_and_its_sub_agents_are_handed_over_once_quiet(tmp_path):
    main = tmp_path / "proj" / "s1.jsonl"
    agent = tmp_path / "proj" / "s1" / "subagents" / "agent-a1.jsonl"
    append(main, 0)
    append(agent, 0, agent="a1")
    f = Follow()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(f.watch.run)
        f.watch.follow(str(main))
        await f.until(lambda: len(f.calls) == 2)
        assert sorted(f.calls) == sorted([str(main), str(agent)])
        append(main, 1)  # the session goes on: handed over again once quiet
        await f.until(lambda: len(f.calls) == 3)
        assert f.calls[-1] == str(main)
        f.stop.set()


async def test_a_followed_session_deleted_is_reported_gone_and_no_longer_followed(tmp_path):
    main = tmp_path / "proj" / "s1.jsonl"
    append(main, 0)
    f = Follow()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(f.watch.run)
        f.watch.follow(str(main))
        await f.until(lambda: f.calls)
        main.unlink()
        await f.until(lambda: f.kinds("gone"))
        assert f.kinds("gone") == [str(main)] and f.watch.mains == set()
        f.stop.set()


async def test_a_session_quiet_for_the_idle_period_is_unfollowed(tmp_path):
    main = tmp_path / "proj" / "s1.jsonl"
    append(main, 0)
    f = Follow(idle_s=0.5)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(f.watch.run)
        f.watch.follow(str(main))
        await f.until(lambda: f.kinds("unfollowed"))
        assert f.calls == [str(main)] and f.watch.mains == set()
        f.stop.set()


async def test_a_file_the_ledger_knows_in_its_state_is_not_handed_over_again(tmp_path):
    main = tmp_path / "proj" / "s1.jsonl"
    append(main, 0)
    st = main.stat()
    f = Follow(known=lambda path: (st.st_size, st.st_mtime_ns) if path == str(main) else None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(f.watch.run)
        f.watch.follow(str(main))
        await trio.sleep(SETTLE * 4)
        assert f.calls == []
        append(main, 1)
        await f.until(lambda: f.calls == [str(main)])
        f.stop.set()


async def test_nothing_followed_means_nothing_polled_and_stop_returns(tmp_path, monkeypatch):
    f = Follow()
    looks = []
    monkeypatch.setattr(f.watch, "_look", lambda: looks.append(time.monotonic()) or [])
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(f.watch.run))
            await trio.sleep(0.5)
            assert looks == []
            f.stop.set()
