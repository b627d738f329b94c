"""Following sessions a hook named: :class:`FileWatch`, the polled sibling of
:class:`~.watch.RootWatch` (same settling core, same rules; see :mod:`.watch`).

A Stop, UserPromptSubmit or SessionStart marker names a session's transcript; when it
lies outside every watched root (a harness running with another config directory),
the daemon follows it here: its main thread and every transcript in its ``<session>/``
folder are statted every ``poll_s`` and handed over once quiet, exactly as a watched
root's are. Polling a few files costs a few stats a second; nothing is polled when
nothing is followed.
"""

from __future__ import annotations

import os

import trio

from .layout import scan
from .watch import SettleWatch, WatchEvent, real_dir, wait_any


class FileWatch(SettleWatch):
    """Sessions a hook named, polled: each followed main thread and the transcripts in
    its ``<session>/`` folder. A followed main thread that is deleted is reported
    ``gone``; one handed over and unchanged for ``idle_s`` is reported ``unfollowed``
    (a later hook follows it again). Idle with nothing followed: it waits for
    :meth:`follow`."""

    def __init__(self, *, idle_s: float = 3600.0, **kw) -> None:
        super().__init__(None, **kw)
        self.idle_s = idle_s
        self.mains: set[str] = set()
        self._wake = trio.Event()

    def follow(self, path: str) -> None:
        self.mains.add(path)
        self._wake.set()

    def _look(self) -> list[tuple[str, os.stat_result | None, object]]:
        """(main, its lstat or None, the walk of its session folder or None) for every
        followed main thread — the blocking part, run in a worker thread."""
        out = []
        for main in sorted(self.mains):
            try:
                st = os.lstat(main)
            except OSError:
                out.append((main, None, None))
                continue
            folder = main[: -len(".jsonl")] if main.endswith(".jsonl") else ""
            walked = scan(os.path.dirname(main), folder) if folder and real_dir(folder) else None
            out.append((main, st, walked))
        return out

    def _drop(self, main: str, kind: str) -> None:
        self.mains.discard(main)
        self.tracker.forget(main)
        self.report(WatchEvent(kind=kind, root="", path=main))

    async def run(self) -> None:
        while not self.stop.is_set():
            if not self.mains:
                await wait_any((self.stop, self._wake), float("inf"))
                self._wake = trio.Event()
                continue
            for main, st, walked in await trio.to_thread.run_sync(self._look):
                if st is None:
                    self._drop(main, "gone")
                    continue
                self._classified(main, st)
                if walked is not None:
                    self.observe_walk(walked, baseline=False)
            await self.settle()
            now = trio.current_time()
            for main in [m for m in self.mains if self.tracker.idle(m, now, self.idle_s)]:
                self._drop(main, "unfollowed")
            with trio.move_on_after(self.wait_s(self.poll_s)):
                await self.stop.wait()
