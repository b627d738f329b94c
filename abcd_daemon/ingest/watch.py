"""Watching harness transcripts: stage each one once it has been quiet, again when it grows.

Two watches share one settling core (:class:`SettleWatch`: a
:class:`~.settle.SettleTracker` fed by stats, handing each settled transcript to
``on_settled(path)`` in a worker thread):

* :class:`RootWatch` — a whole root (the harness store, a ``watch_roots`` entry), with
  ``watchfiles.awatch``: every event is re-statted (events are hints, the stat is the
  fact). :func:`run_watch` runs one per root.
* :class:`~.live.FileWatch` — single sessions a hook named (a main thread and its
  ``<session>/`` folder of sub-agents), polled every ``poll_s``: a handful of stats,
  where a recursive inotify watch of a folder we do not own would be the wrong tool.

Rules:

* Only paths :mod:`.layout` recognises as transcripts are tracked; a symlink or a
  non-regular file is reported once (``skipped``), never followed or read.
* What was handed over before is known by ``known(path)`` — the (size, mtime) the
  harness ledger recorded. A file in that state is not handed over again, whether the
  watch sees it at its first walk, after a catch-up staged it, or when it settles.
  Without ``known``, the first walk of a root is a baseline: what is already there is
  left to ingest and only later changes are staged.
* A root that disappears is reported (``root-missing``) and polled for; when it returns
  (``root-returned``) the watch is re-armed.
* A new directory is walked when it appears (files written before its watch was added
  are not missed) and once more ``settle_s`` later (the recursive watch of a new folder
  is added by another thread: a file created in the window before it is seen by no
  event and by no first walk), and the whole root is walked again every ``rescan_s`` as
  a safety net for events the kernel dropped. A tracked transcript that is deleted (the harness's
  retention) is reported ``gone`` and forgotten.
* ``on_settled`` failing is reported (``failed``) and the file is not retried until it
  changes again: a transcript no repository owns must not be re-read every tick.

Nothing here blocks the event loop: a stat is cheap; walks and ``on_settled`` run in
worker threads. The watches return when ``stop_event`` is set.
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

Known = Callable[[str], "tuple[int, int] | None"]


class WatchEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the watcher tells ``report``. ``kind``: armed | root-missing | root-returned |
    skipped | settled | failed | gone | unfollowed."""

    kind: str
    root: str = ""
    path: str = ""
    reason: str = ""


async def wait_any(events, timeout: float) -> None:
    """Return when any of ``events`` is set, or after ``timeout`` seconds."""
    with trio.move_on_after(timeout):
        async with trio.open_nursery() as nursery:
            async def wait(event: trio.Event) -> None:
                await event.wait()
                nursery.cancel_scope.cancel()

            for event in events:
                nursery.start_soon(wait, event)


def real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class SettleWatch:
    """A tracker and what it has reported; subclasses feed it."""

    def __init__(self, root: str | None, *, settle_s: float, on_settled: Callable[[str], object],
                 stop_event: trio.Event, report: Callable[[WatchEvent], None],
                 poll_s: float, known: Known | None = None) -> None:
        self.root = root
        self.tracker = SettleTracker(settle_s)
        self.on_settled = on_settled
        self.stop = stop_event
        self.report = report
        self.poll_s = poll_s
        self.known = known
        self.reported: set[tuple[str, str]] = set()
        #: Set when an observation may have changed what is due (wakes a sleeping tick).
        self.wake = trio.Event()

    @property
    def label(self) -> str:
        return self.root or ""

    def _skip(self, listed: Listed) -> None:
        if (listed.path, listed.reason) not in self.reported:
            self.reported.add((listed.path, listed.reason))
            self.report(WatchEvent(kind="skipped", root=self.label, path=listed.path,
                                   reason=f"{listed.reason}: {listed.detail}"))

    def _gone(self, path: str) -> None:
        if path in self.tracker:
            self.tracker.forget(path)
            self.report(WatchEvent(kind="gone", root=self.label, path=path))

    def observe_walk(self, walked, *, baseline: bool, root: str | None = None) -> None:
        """Observe everything a walk found (the first sight of a path consults ``known``)."""
        now = trio.current_time()
        for found in walked.found:
            handled = self.known(found.path) if self.known is not None else None
            self.tracker.observe(found.path, found.size, found.mtime_ns, now, baseline=baseline,
                                 handled=handled)
        for listed in walked.listed:
            self._skip(listed)

    def _classified(self, path: str, st: os.stat_result) -> Found | None:
        found = classify_file(self.root, path, st)
        if isinstance(found, Listed):
            self.tracker.forget(path)
            self._skip(found)
            return None
        if found is not None:
            handled = self.known(path) if self.known is not None and path not in self.tracker else None
            self.tracker.observe(path, st.st_size, st.st_mtime_ns, trio.current_time(), handled=handled)
            self.reported = {k for k in self.reported if k[0] != path}
            self.wake.set()
        return found

    async def settle(self) -> None:
        """Hand every due path over, after one more stat proves it is still quiet."""
        for path in self.tracker.due(trio.current_time()):
            try:
                st = os.lstat(path)
            except OSError:
                self._gone(path)
                continue
            if self._classified(path, st) is None or path not in self.tracker.due(trio.current_time()):
                continue  # replaced by something we refuse, or it changed: not quiet yet
            sig = (st.st_size, st.st_mtime_ns)
            if self.known is not None and self.known(path) == sig:
                self.tracker.handled(path, *sig)  # a catch-up handed it over meanwhile
                continue
            try:
                await trio.to_thread.run_sync(self.on_settled, path)
            except Exception as exc:  # the watch must outlive any one file's failure
                self.report(WatchEvent(kind="failed", root=self.label, path=path, reason=str(exc)))
            else:
                self.report(WatchEvent(kind="settled", root=self.label, path=path))
            self.tracker.handled(path, *sig)

    def wait_s(self, longest: float) -> float:
        """How long to sleep before the next look: until the next due path, at most
        ``longest``."""
        due = self.tracker.next_due()
        now = trio.current_time()
        return max(0.01, longest if due is None else min(longest, max(due - now, 0.0)))


class RootWatch(SettleWatch):
    """One root's watch (see the module rules). Between events it sleeps until the next
    due file, the next rescan or ``idle_s`` (when it checks that its root is still
    there), whichever is first: an idle watch wakes a few times a minute at most. An
    absent root is looked for every ``missing_poll_s`` (default ``poll_s``)."""

    def __init__(self, root: str, *, rescan_s: float, idle_s: float | None = None,
                 missing_poll_s: float | None = None, **kw) -> None:
        super().__init__(root, **kw)
        self.rescan_s = rescan_s
        self.idle_s = idle_s if idle_s is not None else self.poll_s
        self.missing_poll_s = missing_poll_s if missing_poll_s is not None else self.poll_s
        #: New directories to walk a second time, with when (see the module rules).
        self.second_look: dict[str, float] = {}

    async def scan(self, start: str, *, baseline: bool) -> None:
        """Walk ``start`` in a worker thread (a large root takes a while) and observe
        everything found. A walk of the whole root also forgets files that are gone."""
        started = trio.current_time()
        walked = await trio.to_thread.run_sync(scan, self.root, start)
        self.observe_walk(walked, baseline=baseline)
        if start == self.root:
            for path in self.tracker.retain({f.path for f in walked.found}, walk_started=started):
                self.report(WatchEvent(kind="gone", root=self.root, path=path))

    async def event(self, change: watchfiles.Change, path: str) -> None:
        """Re-stat one path an event named and tell the tracker what is there now, then
        wake the tick — after, not before: a new directory is walked in a thread, and a
        tick woken before the walk had tracked its files would sleep past them (until
        ``idle_s``), a session stored half a minute late."""
        try:
            await self._observe(change, path)
        finally:
            self.wake.set()  # whatever it was, the tick looks again (the root may be gone)

    async def _observe(self, change: watchfiles.Change, path: str) -> None:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            self._gone(path)
            return
        except OSError:
            return
        if stat.S_ISDIR(st.st_mode):
            if change == watchfiles.Change.added and path != self.root:
                await self.scan(path, baseline=False)
                self.second_look[path] = trio.current_time() + self.tracker.settle_s
            return
        if stat.S_ISLNK(st.st_mode) and not path.endswith(".jsonl"):
            self._skip(Listed(path=path, reason="symlink", detail="a symlink is never followed"))
            return
        self._classified(path, st)

    async def tick(self, unarm: trio.Event, *, baseline: bool) -> None:
        """Scan once the watcher is armed, then settle, rescan and check the root until
        the root vanishes or the watch stops (either unarms the watcher)."""
        await self.scan(self.root, baseline=baseline)
        self.report(WatchEvent(kind="armed", root=self.root))
        next_scan = trio.current_time() + self.rescan_s
        while not self.stop.is_set() and real_dir(self.root):
            self.wake = trio.Event()
            await self.settle()
            now = trio.current_time()
            if now >= next_scan:
                await self.scan(self.root, baseline=False)
                next_scan = now + self.rescan_s
                self.second_look.clear()
            for path in [p for p, at in self.second_look.items() if at <= now]:
                del self.second_look[path]
                if real_dir(path):
                    await self.scan(path, baseline=False)
            soonest = min([next_scan, *self.second_look.values()])
            await wait_any((self.stop, self.wake),
                           self.wait_s(min(self.idle_s, max(soonest - now, 0.01))))
        unarm.set()

    async def _unarm_on_stop(self, unarm: trio.Event) -> None:
        """Unarm the moment the watch stops: the watcher's thread cannot be cancelled,
        only told to stop (it checks every ``step``)."""
        try:
            await wait_any((self.stop, unarm), float("inf"))
        finally:  # cancelled too: the daemon cancels its tasks as soon as it stops
            unarm.set()

    async def arm(self, *, baseline: bool) -> None:
        unarm = trio.Event()
        debounce = int(min(1600, max(50, self.tracker.settle_s * 250)))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(self.tick, unarm, baseline=baseline))
            nursery.start_soon(self._unarm_on_stop, unarm)
            async for changes in watchfiles.awatch(
                self.root, watch_filter=None, stop_event=unarm, debounce=debounce, step=250,
                rust_timeout=10_000, yield_on_timeout=False,
            ):
                for change, path in sorted(changes, key=lambda c: c[1]):
                    await self.event(change, path)
            unarm.set()

    async def run(self) -> None:
        first = self.known is None  # without a ledger, the first walk is the baseline
        while not self.stop.is_set():
            if not real_dir(self.root):
                self.report(WatchEvent(kind="root-missing", root=self.root,
                                       reason="the root is gone or is not a directory; "
                                              "watching for it to return"))
                while not self.stop.is_set() and not real_dir(self.root):
                    with trio.move_on_after(self.missing_poll_s):
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
                if real_dir(self.root):
                    self._skip(Listed(path=self.root, reason="unwatchable", detail=str(exc)))
                    with trio.move_on_after(self.poll_s):
                        await self.stop.wait()
            first = False


async def run_watch(roots, *, settle_s: float, on_settled: Callable[[str], object],
                    stop_event: trio.Event, report: Callable[[WatchEvent], None],
                    poll_s: float = 1.0, rescan_s: float = 300.0, known: Known | None = None) -> None:
    """Watch every root until ``stop_event`` is set (see the module rules).

    ``on_settled(path)`` is called in a worker thread for each transcript that has
    been quiet for ``settle_s`` (the daemon stages it through ``ingest_file``);
    ``report(WatchEvent)`` is called on the event loop. ``poll_s`` bounds how late a
    vanished root, a stop or a due file is noticed. Never raises for a root's troubles.
    """
    async with trio.open_nursery() as nursery:
        for root in roots:
            watch = RootWatch(os.path.abspath(os.path.expanduser(root)), settle_s=settle_s,
                              on_settled=on_settled, stop_event=stop_event, report=report,
                              poll_s=poll_s, rescan_s=rescan_s, known=known)
            nursery.start_soon(watch.run)
