"""The watcher: the pure settle tracker, then real files under real watchfiles (trio)."""

import json
import os
import shutil
import time
from functools import partial

import trio

from abcd_daemon.ingest.settle import SettleTracker
from abcd_daemon.ingest.watch import run_watch

from .conftest import claude_line

SETTLE = 0.4


# -- the tracker (pure) ------------------------------------------------------------
def test_a_file_is_due_once_it_has_been_quiet_for_the_settle_interval():
    t = SettleTracker(30.0)
    t.observe("/r/a.jsonl", 10, 1, now=0.0)
    t.observe("/r/a.jsonl", 20, 2, now=10.0)
    assert t.due(39.9) == [] and t.next_due() == 40.0
    assert t.due(40.0) == ["/r/a.jsonl"]


def test_a_burst_of_observations_is_one_due_path():
    t = SettleTracker(1.0)
    for i in range(50):
        t.observe("/r/a.jsonl", i, i, now=i * 0.01)
    assert t.due(10.0) == ["/r/a.jsonl"]


def test_a_handled_file_is_due_again_only_when_it_changes():
    t = SettleTracker(1.0)
    t.observe("/r/a.jsonl", 10, 1, now=0.0)
    t.handled("/r/a.jsonl", 10, 1)
    t.observe("/r/a.jsonl", 10, 1, now=5.0)
    assert t.due(10.0) == []
    t.observe("/r/a.jsonl", 30, 2, now=10.0)
    assert t.due(10.5) == [] and t.due(11.0) == ["/r/a.jsonl"]


def test_a_baseline_observation_is_not_due_and_a_forgotten_file_is_new():
    t = SettleTracker(1.0)
    t.observe("/r/a.jsonl", 10, 1, now=0.0, baseline=True)
    assert t.due(5.0) == [] and t.next_due() is None
    t.forget("/r/a.jsonl")
    t.observe("/r/a.jsonl", 10, 1, now=5.0)
    assert t.due(6.0) == ["/r/a.jsonl"]


def test_a_full_walk_forgets_files_that_are_gone_but_not_one_that_raced_it():
    t = SettleTracker(1.0)
    t.observe("/r/gone.jsonl", 1, 1, now=0.0)
    t.observe("/r/kept.jsonl", 1, 1, now=0.0)
    t.observe("/r/new.jsonl", 1, 1, now=3.0)  # seen by an event while the walk ran
    t.retain({"/r/kept.jsonl"}, walk_started=2.0)
    assert t.due(5.0) == ["/r/kept.jsonl", "/r/new.jsonl"] and len(t) == 2


# -- real files, real watchfiles --------------------------------------------------
class Harness:
    def __init__(self, root):
        self.root = root
        self.calls: list[tuple[str, float]] = []
        self.events = []
        self.stop = trio.Event()

    def on_settled(self, path):
        self.calls.append((path, time.monotonic()))

    def kinds(self, kind):
        return [e for e in self.events if e.kind == kind]

    async def until(self, predicate, timeout=10.0):
        with trio.fail_after(timeout):
            while not predicate():
                await trio.sleep(0.02)

    def start(self, nursery):
        nursery.start_soon(partial(run_watch, [self.root], settle_s=SETTLE, on_settled=self.on_settled,
                                   stop_event=self.stop, report=self.events.append, poll_s=0.05))


def append(path, n):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(claude_line("s1", "/repo", n)) + "\n")


async def test_the_watcher_stages_a_file_once_after_it_settles_and_again_after_it_grows(tmp_path):
    w = Harness(tmp_path / "root")
    w.root.mkdir()
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        path = w.root / "proj" / "s1.jsonl"
        for n in range(5):  # a burst of writes, each closer together than the settle interval
            append(path, n)
            await trio.sleep(SETTLE / 8)
        last_write = time.monotonic()
        await w.until(lambda: w.calls)
        await trio.sleep(SETTLE * 3)
        assert [p for p, _ in w.calls] == [str(path)]
        assert w.calls[0][1] - last_write >= SETTLE * 0.9
        append(path, 5)
        await w.until(lambda: len(w.calls) == 2)
        await trio.sleep(SETTLE * 2)
        assert [p for p, _ in w.calls] == [str(path)] * 2
        assert len(w.kinds("settled")) == 2
        w.stop.set()


async def test_files_present_when_the_watch_starts_are_left_to_ingest(tmp_path):
    w = Harness(tmp_path / "root")
    append(w.root / "proj" / "old.jsonl", 0)
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        append(w.root / "proj" / "new.jsonl", 0)
        await w.until(lambda: w.calls)
        await trio.sleep(SETTLE * 2)
        assert [os.path.basename(p) for p, _ in w.calls] == ["new.jsonl"]
        w.stop.set()


async def test_the_watcher_survives_its_root_being_deleted_and_recreated(tmp_path):
    w = Harness(tmp_path / "root")
    w.root.mkdir()
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        shutil.rmtree(w.root)
        await w.until(lambda: w.kinds("root-missing"))
        w.root.mkdir()
        append(w.root / "proj" / "s1.jsonl", 0)  # written as soon as the root is back
        await w.until(lambda: w.kinds("root-returned"))
        await w.until(lambda: len(w.kinds("armed")) == 2)
        await w.until(lambda: w.calls)
        assert [p for p, _ in w.calls] == [str(w.root / "proj" / "s1.jsonl")]
        append(w.root / "proj" / "s2.jsonl", 0)  # and the re-armed watch sees later files
        await w.until(lambda: len(w.calls) == 2)
        w.stop.set()


async def test_a_symlink_or_a_fifo_in_a_root_is_skipped_with_a_reason(tmp_path):
    w = Harness(tmp_path / "root")
    (w.root / "proj").mkdir(parents=True)
    target = tmp_path / "elsewhere.jsonl"
    append(target, 0)
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        os.symlink(target, w.root / "proj" / "s1.jsonl")
        os.mkfifo(w.root / "proj" / "s2.jsonl")
        await w.until(lambda: len(w.kinds("skipped")) == 2)
        await trio.sleep(SETTLE * 2)
        assert w.calls == []
        reasons = sorted(e.reason.split(":")[0] for e in w.kinds("skipped"))
        assert reasons == ["not-regular", "symlink"]
        w.stop.set()


async def test_a_failing_handler_is_reported_and_not_retried_until_the_file_changes(tmp_path):
    w = Harness(tmp_path / "root")
    w.root.mkdir()

    def refuse(path):
        w.calls.append((path, time.monotonic()))
        raise RuntimeError("no repository owns it")

    w.on_settled = refuse
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        append(w.root / "p" / "s1.jsonl", 0)
        await w.until(lambda: w.kinds("failed"))
        await trio.sleep(SETTLE * 3)
        assert len(w.calls) == 1 and "no repository owns it" in w.kinds("failed")[0].reason
        w.stop.set()


async def test_the_watch_returns_when_stopped(tmp_path):
    w = Harness(tmp_path / "root")
    w.root.mkdir()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            w.start(nursery)
            await w.until(lambda: w.kinds("armed"))
            w.stop.set()


async def test_with_a_ledger_only_files_changed_since_they_were_handed_over_are_staged(tmp_path):
    w = Harness(tmp_path / "root")
    known_path, changed_path = w.root / "proj" / "known.jsonl", w.root / "proj" / "changed.jsonl"
    append(known_path, 0)
    append(changed_path, 0)
    st = known_path.stat()
    ledger = {str(known_path): (st.st_size, st.st_mtime_ns), str(changed_path): (1, 1)}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(run_watch, [w.root], settle_s=SETTLE, on_settled=w.on_settled,
                                   stop_event=w.stop, report=w.events.append, poll_s=0.05,
                                   known=ledger.get))
        await w.until(lambda: w.calls)
        await trio.sleep(SETTLE * 2)
        assert [p for p, _ in w.calls] == [str(changed_path)]
        w.stop.set()


async def test_a_tracked_transcript_that_is_deleted_is_reported_gone(tmp_path):
    w = Harness(tmp_path / "root")
    w.root.mkdir()
    async with trio.open_nursery() as nursery:
        w.start(nursery)
        await w.until(lambda: w.kinds("armed"))
        path = w.root / "proj" / "s1.jsonl"
        append(path, 0)
        await w.until(lambda: w.calls)
        path.unlink()
        await w.until(lambda: w.kinds("gone"))
        assert [e.path for e in w.kinds("gone")] == [str(path)]
        w.stop.set()


async def test_an_event_for_a_new_directory_wakes_the_tick_only_once_its_files_are_tracked(tmp_path):
    """The tick replaces its wake event whenever it wakes; a new directory is walked in
    a worker thread. Were the wake set before the walk, a tick woken meanwhile would
    arm a fresh event and sleep ``idle_s`` past the files the walk then tracked (a
    session stored half a minute late). The wake the tick waits on after the event must
    be set, with the walked file already tracked."""
    from abcd_daemon.ingest.watch import RootWatch

    root = tmp_path / "projects"
    project = root / "-work-repo"
    project.mkdir(parents=True)
    session = "5a9221e2-0000-4000-8000-000000000001"
    (project / f"{session}.jsonl").write_text(json.dumps(claude_line(session, "/work/repo", 0)) + "\n")
    watch = RootWatch(str(root), rescan_s=300, idle_s=30, settle_s=SETTLE, on_settled=lambda p: None,
                      stop_event=trio.Event(), report=lambda e: None, poll_s=1.0, known=None)
    scan = watch.scan

    async def scan_while_the_tick_rearms(start, *, baseline):
        watch.wake = trio.Event()  # what the tick does when an earlier set woke it
        await scan(start, baseline=baseline)

    watch.scan = scan_while_the_tick_rearms
    await watch.event(__import__("watchfiles").Change.added, str(project))
    assert watch.wake.is_set()
    assert watch.tracker.next_due() is not None


async def test_a_file_no_event_named_in_a_new_directory_is_found_by_its_second_look(tmp_path):
    """The recursive watch of a new folder is added by the watcher's own thread; a file
    created before that, but after the folder's first walk, is named by no event. The
    folder is walked again ``settle_s`` later, so the file is staged then — not at the
    next full rescan, minutes away."""
    from abcd_daemon.ingest.watch import RootWatch

    root = tmp_path / "projects"
    root.mkdir()
    calls, events = [], []
    stop = trio.Event()
    watch = RootWatch(str(root), rescan_s=300, idle_s=30, settle_s=SETTLE, on_settled=calls.append,
                      stop_event=stop, report=events.append, poll_s=1.0, known=None)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(watch.tick, trio.Event(), baseline=False))  # no awatch: only what we tell it
        with trio.fail_after(10):
            while not [e for e in events if e.kind == "armed"]:
                await trio.sleep(0.02)
        project = root / "-work-repo"
        project.mkdir()
        await watch.event(__import__("watchfiles").Change.added, str(project))  # empty yet
        session = "5a9221e2-0000-4000-8000-000000000002"
        path = project / f"{session}.jsonl"
        path.write_text(json.dumps(claude_line(session, "/work/repo", 0)) + "\n")
        with trio.fail_after(SETTLE * 4 + 5):
            while not calls:
                await trio.sleep(0.02)
        assert calls == [str(path)]
        stop.set()
