"""The daemon's hold on the index: one writer, a reader per worker thread, and which
lanes are known to be level with their records.

Synchronous and thread-safe; the daemon calls it from worker threads only (never on
the event loop). Contracts:

- :meth:`IndexKeeper.sync` brings lanes level (every lane when ``roots`` is None),
  under one write lock; the drain loop calls it at start (the repair of a crash
  between a record write and its rows);
- :meth:`IndexKeeper.update` brings named record files level (the drain loop's call
  after a pass that stored: the files it stored and superseded, a ``stat`` each, no
  directory listed); it leaves the lanes' level marks alone, so a record written
  behind the daemon's back meanwhile is still found by the next read's sync;
- :meth:`IndexKeeper.read` runs a query on this thread's reader connection after
  making the lanes it reads level: a lane whose records directory has not changed
  since a sync found it quiet costs one ``stat``, so a record written behind the
  daemon's back (``abcd history capture``, a restore) is found by the next search;
- a records directory modified within :data:`QUIET_NS` of the sync that looked at it
  is not trusted as level (directory times are coarse: a record written in the same
  clock tick as that look must not be missed) — the next read syncs it again;
- a read waits at most :data:`WAIT_S` for a sync another thread runs: during a
  first build or a rebuild, searches answer from the batches committed so far;
- :meth:`IndexKeeper.rebuild` empties the database in place and derives it again:
  open connections stay valid, no file is unlinked under a reader.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from ..paths import Home
from ..store.lane import Lane, list_lanes
from . import db

T = TypeVar("T")
#: A records directory changed this recently is synced again on the next read.
QUIET_NS = 2_000_000_000
#: How long a read waits for a sync another thread is running before it answers
#: from what is indexed so far.
WAIT_S = 2.0


def _signature(lane: Lane) -> tuple[int, int]:
    """What changes when a record is added, replaced or removed in ``lane`` (``(0, 0)``
    while it has no records directory)."""
    try:
        st = os.stat(lane.records, follow_symlinks=False)
    except OSError:
        return 0, 0
    return st.st_ino, st.st_mtime_ns


class IndexKeeper:
    def __init__(self, home: Home) -> None:
        self.home = home
        self._write = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._local = threading.local()
        #: root → the records directory's signature when a sync last found it quiet
        self._level: dict[str, tuple[int, int]] = {}

    # -- writing -----------------------------------------------------------------
    def _writer_conn(self) -> sqlite3.Connection:
        if self._writer is None:
            self._writer = db.connect(self.home)
        return self._writer

    def sync(self, roots: Iterable[str] | None = None,
             progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
        """Bring the lanes ``roots`` (every lane when None) level; ``(indexed, dropped)``."""
        with self._write:
            return self._sync_locked(roots, progress)

    def _sync_locked(self, roots, progress=None) -> tuple[int, int]:
        lanes = list_lanes(self.home) if roots is None else [Lane(self.home, r) for r in sorted(set(roots))]
        before = {lane.root_sha: _signature(lane) for lane in lanes}
        started = time.time_ns()
        conn = self._writer_conn()
        result = db.sync(conn, self.home, progress, lanes=None if roots is None else lanes)
        for root, sig in before.items():
            if started - sig[1] > QUIET_NS and _signature(Lane(self.home, root)) == sig:
                self._level[root] = sig
            else:
                self._level.pop(root, None)
        return result

    def update(self, changed: Mapping[str, Iterable[str]]) -> tuple[int, int]:
        """Bring the record files ``changed`` names (root → file names) level;
        ``(indexed, dropped)``."""
        indexed = dropped = 0
        with self._write:
            conn = self._writer_conn()
            for root in sorted(changed):
                n, d = db.update(conn, Lane(self.home, root), changed[root])
                indexed, dropped = indexed + n, dropped + d
        return indexed, dropped

    def refresh(self) -> tuple[int, int]:
        """Sync every lane whose records changed since it was last level (after a
        request that may have stored or removed records: ingest, drain, discard)."""
        stale = self._stale(())
        return self.sync(stale) if stale else (0, 0)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Empty the index in place and derive it from every record; records indexed."""
        with self._write:
            conn = self._writer_conn()
            db.reset(conn)
            self._level.clear()
        return self.sync(None, progress)[0]

    # -- reading -----------------------------------------------------------------
    def _stale(self, roots: tuple[str, ...]) -> list[str]:
        lanes = [Lane(self.home, r) for r in roots] if roots else list_lanes(self.home)
        return [lane.root_sha for lane in lanes
                if self._level.get(lane.root_sha) is None or _signature(lane) != self._level[lane.root_sha]]

    def read(self, roots: tuple[str, ...], query: Callable[[sqlite3.Connection], T]) -> T:
        """``query(conn)`` on this thread's reader, once the lanes of ``roots`` (every
        lane when empty) are level. While a long sync holds the writer (a first
        build, a rebuild) the query answers from what is indexed so far rather
        than wait for it (:data:`WAIT_S`)."""
        stale = self._stale(roots)
        if stale and self._write.acquire(timeout=WAIT_S):
            try:
                self._sync_locked(stale)
            finally:
                self._write.release()
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.open_reader(self.home)
            if conn is None:  # no index yet: created (never beside a writer creating it)
                with self._write:
                    conn = db.connect(self.home)
            self._local.conn = conn
        return query(conn)

    def close(self) -> None:
        """Close the writer (readers close with their threads)."""
        with self._write:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
