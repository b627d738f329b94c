"""Watching harness roots that have no hooks: stage a transcript once it has been quiet.

:func:`run_watch` (trio) runs one task per root. Each arms ``watchfiles.awatch`` on its
root, walks it, feeds every event to a :class:`~.settle.SettleTracker` after
re-statting the path (events are hints, the stat is the fact), and hands each settled
transcript to ``on_settled(path)`` in a worker thread. Rules:

* Only paths :mod:`.layout` recognises as transcripts are tracked; a symlink or a
  non-regular file is reported once (``skipped``), never followed or read.
* The first walk of a root is a baseline: what is already there was there before the
  watch began (recovering it is ``ingest``'s job), so only later changes are staged.
* A root that disappears is reported (``root-missing``) and polled for; when it returns
  (``root-returned``) the watch is re-armed and everything in it is new.
* A new directory is walked when it appears (files written before its watch was added
  are not missed), and the whole root is walked again every ``rescan_s`` as a safety
  net for events the kernel dropped (files no longer there are forgotten).
* ``on_settled`` failing is reported (``failed``) and the file is not retried until it
  changes again: a transcript no repository owns must not be re-read every tick.

Nothing here blocks the event loop: a stat is cheap; walks and ``on_settled`` run in
worker threads. ``run_watch`` returns when ``stop_event`` is set.
"""

from __future__ import annotations

import os
import stat
from functools import partial
from typing import Callable

import msgspec
import trio
import watchfiles

from .layout import Found, classify_file, scan
from .report import Listed
from .settle import SettleTracker


class WatchEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the watcher tells ``report``. ``kind``: armed | root-missing | root-returned |
    skipped | settled | failed."""

    kind: str
    root: str
    path: str = ""
    reason: str = ""


def _real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class _RootWatch:
    """One root's watch: its tracker, and what it has already reported."""

    def __init__(self, root: str, *, settle_s: float, on_settled: Callable[[str], object],
                 stop_event: trio.Event, report: Callable[[WatchEvent], None],
                 poll_s: float, rescan_s: float) -> None:
        self.root = root
        self.tracker = SettleTracker(settle_s)
        self.on_settled = on_settled
        self.stop = stop_event
        self.report = report
        self.poll_s = poll_s
        self.rescan_s = rescan_s
        self.reported: set[tuple[str, str]] = set()

    def _skip(self, listed: Listed) -> None:
        if (listed.path, listed.reason) not in self.reported:
            self.reported.add((listed.path, listed.reason))
            self.report(WatchEvent(kind="skipped", root=self.root, path=listed.path,
                                   reason=f"{listed.reason}: {listed.detail}"))

    async def scan(self, start: str, *, baseline: bool) -> None:
        """Walk ``start`` in a worker thread (a large root takes a while) and observe
        everything found. A walk of the whole root also forgets files that are gone."""
        started = trio.current_time()
        walked = await trio.to_thread.run_sync(scan, self.root, start)
        now = trio.current_time()
        for found in walked.found:
            self.tracker.observe(found.path, found.size, found.mtime_ns, now, baseline=baseline)
        for listed in walked.listed:
            self._skip(listed)
        if start == self.root:
            self.tracker.retain({found.path for found in walked.found}, walk_started=started)

    async def event(self, change: watchfiles.Change, path: str) -> None:
        """Re-stat one path an event named and tell the tracker what is there now."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            self.tracker.forget(path)
            return
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode):
            if change == watchfiles.Change.added and path != self.root:
                await self.scan(path, baseline=False)
            return
        if stat.S_ISLNK(st.st_mode) and not path.endswith(".jsonl"):
            self._skip(Listed(path=path, reason="symlink", detail="a symlink is never followed"))
            return
        self._classified(path, st)

    def _classified(self, path: str, st: os.stat_result) -> Found | None:
        found = classify_file(self.root, path, st)
        if isinstance(found, Listed):
            self.tracker.forget(path)
            self._skip(found)
            return None
        if found is not None:
            self.tracker.observe(path, st.st_size, st.st_mtime_ns, trio.current_time())
            self.reported = {k for k in self.reported if k[0] != path}
        return found

    async def settle(self) -> None:
        """Hand every due path over, after one more stat proves it is still quiet."""
        for path in self.tracker.due(trio.current_time()):
            try:
                st = os.lstat(path)
            except OSError:
                self.tracker.forget(path)
                continue
            if self._classified(path, st) is None or path not in self.tracker.due(trio.current_time()):
                continue  # replaced by something we refuse, or it changed: not quiet yet
            try:
                await trio.to_thread.run_sync(self.on_settled, path)
            except Exception as exc:  # the watch must outlive any one file's failure
                self.report(WatchEvent(kind="failed", root=self.root, path=path, reason=str(exc)))
            else:
                self.report(WatchEvent(kind="settled", root=self.root, path=path))
            self.tracker.handled(path, st.st_size, st.st_mtime_ns)

    async def tick(self, unarm: trio.Event, *, baseline: bool) -> None:
        """Scan once the watcher is armed, then settle, rescan and check the root until
        the root vanishes or the watch stops (either unarms the watcher)."""
        await self.scan(self.root, baseline=baseline)
        self.report(WatchEvent(kind="armed", root=self.root))
        next_scan = trio.current_time() + self.rescan_s
        while not self.stop.is_set() and _real_dir(self.root):
            await self.settle()
            now = trio.current_time()
            if now >= next_scan:
                await self.scan(self.root, baseline=False)
                next_scan = now + self.rescan_s
            due = self.tracker.next_due()
            wait = self.poll_s if due is None else min(self.poll_s, max(due - now, 0.0))
            await trio.sleep(max(wait, 0.01))
        unarm.set()

    async def arm(self, *, baseline: bool) -> None:
        unarm = trio.Event()
        debounce = int(min(1600, max(50, self.tracker.settle_s * 250)))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(self.tick, unarm, baseline=baseline))
            async for changes in watchfiles.awatch(
                self.root, watch_filter=None, stop_event=unarm, debounce=debounce, step=250,
                rust_timeout=int(self.poll_s * 1000) + 100, yield_on_timeout=False,
            ):
                for change, path in sorted(changes, key=lambda c: c[1]):
                    await self.event(change, path)
            unarm.set()

    async def run(self) -> None:
        first = True
        while not self.stop.is_set():
            if not _real_dir(self.root):
                self.report(WatchEvent(kind="root-missing", root=self.root,
                                       reason="the root is gone or is not a directory; "
                                              "watching for it to return"))
                while not self.stop.is_set() and not _real_dir(self.root):
                    with trio.move_on_after(self.poll_s):
                        await self.stop.wait()
                if self.stop.is_set():
                    return
                self.report(WatchEvent(kind="root-returned", root=self.root))
                self.tracker.clear()
                self.reported.clear()
                first = False  # a root that came back holds only new files
            try:
                await self.arm(baseline=first)
            except OSError as exc:  # vanished between the check and the arming, or unwatchable
                if _real_dir(self.root):
                    self._skip(Listed(path=self.root, reason="unwatchable", detail=str(exc)))
                    with trio.move_on_after(self.poll_s):
                        await self.stop.wait()
            first = False


async def run_watch(roots, *, settle_s: float, on_settled: Callable[[str], object],
                    stop_event: trio.Event, report: Callable[[WatchEvent], None],
                    poll_s: float = 1.0, rescan_s: float = 300.0) -> None:
    """Watch every root until ``stop_event`` is set (see the module rules).

    ``on_settled(path)`` is called in a worker thread for each transcript that has
    been quiet for ``settle_s`` (the daemon stages it through ``ingest_file``);
    ``report(WatchEvent)`` is called on the event loop. ``poll_s`` bounds how late a
    vanished root, a stop or a due file is noticed. Never raises for a root's troubles.
    """
    async with trio.open_nursery() as nursery:
        for root in roots:
            watch = _RootWatch(os.path.abspath(os.path.expanduser(root)), settle_s=settle_s,
                               on_settled=on_settled, stop_event=stop_event, report=report,
                               poll_s=poll_s, rescan_s=rescan_s)
            nursery.start_soon(watch.run)


async def run_watch_roots(daemon) -> None:
    """The daemon's ``root_watch`` task: watch ``daemon.config.watch_roots`` until
    ``daemon.stopping``, stage each settled transcript through
    :func:`~.run.ingest_file` (in a worker thread), ring the drain after each one, and
    keep ``daemon.stats.watch_roots`` (shown by ``abcd daemon status``) current."""
    import logging
    import time

    from ..status import WatchRootState
    from .run import ingest_file

    log = logging.getLogger("abcd.watch")
    roots = list(dict.fromkeys(os.path.abspath(os.path.expanduser(r)) for r in daemon.config.watch_roots))
    states = {root: WatchRootState(path=root, state="starting") for root in roots}
    daemon.stats.watch_roots = list(states.values())

    def state_of(path: str) -> WatchRootState | None:
        owners = [r for r in roots if path == r or path.startswith(r.rstrip("/") + "/")]
        return states[max(owners, key=len)] if owners else None

    def on_settled(path: str):
        state = state_of(path)
        report = ingest_file(daemon.home, path, config=daemon.config, now_ns=time.time_ns(),
                             root=state.path if state else None)
        problems = report.unowned + report.skipped + report.failed
        if state is not None:
            state.staged += len(report.staged)
            if problems:
                state.last_error = f"{os.path.basename(path)}: {problems[0].detail}"
        for problem in problems:
            log.warning("watch: %s not staged (%s): %s", path, problem.reason, problem.detail)
        return report

    def report(event: WatchEvent) -> None:
        state = states.get(event.root)
        if event.kind in ("armed", "root-returned") and state is not None:
            state.state = "watching"
        elif event.kind == "root-missing" and state is not None:
            state.state = "missing"
            log.warning("watch root %s is gone; waiting for it to return", event.root)
        elif event.kind == "skipped" and state is not None:
            state.skipped += 1
            log.info("watch: skipped %s (%s)", event.path, event.reason)
        elif event.kind == "failed":
            if state is not None:
                state.last_error = event.reason
            log.warning("watch: %s failed: %s", event.path or event.root, event.reason)
        elif event.kind == "settled":
            daemon.drain_wake.set()

    # Catch up first: transcripts written while the daemon was down are recovered by an
    # ingest of the roots (idempotent, cheap when nothing is new); the watch's baseline
    # walk then starts from what is already staged or stored.
    from .run import ingest

    existing = [r for r in roots if _real_dir(r)]
    if existing:
        try:
            caught = await trio.to_thread.run_sync(
                partial(ingest, daemon.home, existing, config=daemon.config, now_ns=time.time_ns()))
            if caught.staged:
                log.info("watch: caught up %d transcript(s) written while the daemon was down",
                         len(caught.staged))
                daemon.drain_wake.set()
        except Exception as exc:  # noqa: BLE001 - the watch itself still runs
            log.warning("watch: catch-up ingest failed (%s); watching for new changes only", exc)
    await run_watch(roots, settle_s=daemon.config.watch_settle_s, on_settled=on_settled,
                    stop_event=daemon.stopping, report=report)
