"""Which watched transcripts are quiet: the settle tracker. Pure, no I/O, no clock.

Fed ``(path, size, mtime_ns, now)`` observations, it answers which paths have been quiet
for ``settle_s`` and changed since they were last handed over. A burst of events for one
file is one entry; a file that grows after it was handed over is due again once it is
quiet again (capture supersedes the shorter record by prefix). A baseline observation
(what was there when the watch began) counts as already handed over; so does a first
observation in the state the caller says it was last handed over in (``handled``: the
harness ledger's answer).
"""

from __future__ import annotations


class _State:
    __slots__ = ("sig", "changed_at", "handled")

    def __init__(self, sig: tuple[int, int], now: float, handled: tuple[int, int] | None) -> None:
        self.sig = sig
        self.changed_at = now
        self.handled = handled


class SettleTracker:
    """Which transcripts are quiet and changed since handed over. Pure and sync."""

    def __init__(self, settle_s: float) -> None:
        self.settle_s = settle_s
        self._paths: dict[str, _State] = {}

    def observe(self, path: str, size: int, mtime_ns: int, now: float, *,
                baseline: bool = False, handled: tuple[int, int] | None = None) -> None:
        """Record what a stat saw. A changed (size, mtime) restarts the quiet period;
        ``baseline`` marks the current state as already handled; ``handled`` is the
        state a path seen for the first time was last handed over in."""
        sig = (size, mtime_ns)
        state = self._paths.get(path)
        if state is None:
            self._paths[path] = _State(sig, now, sig if baseline else handled)
        elif state.sig != sig:
            state.sig, state.changed_at = sig, now
            if baseline:
                state.handled = sig

    def forget(self, path: str) -> None:
        """The file is gone; a file that appears under the name later is new."""
        self._paths.pop(path, None)

    def retain(self, paths: set[str], *, walk_started: float) -> list[str]:
        """Forget every tracked path that a full walk begun at ``walk_started`` did not
        find — unless it changed after the walk began (an event raced the walk).
        Returns the forgotten paths."""
        gone = [p for p, s in self._paths.items() if p not in paths and s.changed_at < walk_started]
        for path in gone:
            del self._paths[path]
        return gone

    def clear(self) -> None:
        self._paths.clear()

    def due(self, now: float) -> list[str]:
        """Paths quiet for ``settle_s`` whose state differs from the one handed over,
        sorted (main threads sort before their ``<session>/subagents`` folder)."""
        return sorted(p for p, s in self._paths.items()
                      if s.sig != s.handled and now - s.changed_at >= self.settle_s)

    def handled(self, path: str, size: int, mtime_ns: int) -> None:
        """``path`` was handed over in this state."""
        state = self._paths.get(path)
        if state is not None:
            state.handled = (size, mtime_ns)

    def idle(self, path: str, now: float, idle_s: float) -> bool:
        """True when ``path`` was handed over in its current state and has not changed
        for ``idle_s``."""
        state = self._paths.get(path)
        return state is not None and state.sig == state.handled and now - state.changed_at >= idle_s

    def pending(self) -> list[str]:
        """Paths changed since they were last handed over (due now or once quiet)."""
        return [p for p, s in self._paths.items() if s.sig != s.handled]

    def next_due(self) -> float | None:
        """The earliest time a pending path becomes due, or None."""
        times = [s.changed_at + self.settle_s for s in self._paths.values() if s.sig != s.handled]
        return min(times) if times else None

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: str) -> bool:
        return path in self._paths
