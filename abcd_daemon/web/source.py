"""Where the viewer's data comes from: the same read core as the CLI, in-process.

:class:`LocalSource` answers every question the pages ask — repositories, a
repository's sessions, one session's reconstruction, its per-thread costs, a search —
from the store and its index. The client's ``DaemonSource``
(:mod:`abcd_client.view_source`) overrides the record listing and the reconstruction
to ask the daemon when one runs, so a page shows exactly what ``abcd history list`` and
``abcd history reconstruct`` would.

Contracts:
- read-only towards the store: nothing here writes a record, a staging entry or a
  note. The one thing written is the derived index, brought level with the records
  by :meth:`LocalSource.refresh_index` (as ``abcd search`` does), which the server
  runs in the background;
- every id coming from a URL is checked before it names a path (a root SHA by
  :func:`~abcd_daemon.ids.check_root_sha`, a session id by the record listing it
  must appear in); an unknown one is :class:`~abcd_daemon.errors.NotFoundError`;
- reconstruction uses the CLI's defaults (full mode, 8 KiB per-block cap).

Synchronous; the server calls it from worker threads (it is safe to share: each call
opens its own index connection; the sync is serialised by a lock).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..errors import NotFoundError
from ..ids import check_root_sha
from ..store.lane import Lane, list_lanes
from ..store.record import Record
from ..store.records import list_records

SYNC_EVERY_S = 10.0
MAX_BLOCK_BYTES = 8 << 10


@dataclass
class RepoRow:
    root_sha: str
    name: str
    sessions: int
    last_captured_at: str


@dataclass
class SessionRow:
    session_id: str
    started_ns: int
    ended_ns: int
    agents: int
    tokens: int | None
    cost: tuple[float, int] | None
    last_captured_at: str


class LocalSource:
    """The in-process core over ``home`` (a :class:`~abcd_daemon.paths.Home`)."""

    def __init__(self, home, pricing_overrides=None) -> None:
        self.home = home
        self._pricing_overrides = dict(pricing_overrides or {})
        self._sync_lock = threading.Lock()
        self._synced_at = -1.0

    # -- records (overridden by the daemon-served source) ----------------------------
    def records(self, lane: Lane) -> list[Record]:
        """Every record of ``lane``, newest first."""
        return list_records(lane)

    def reconstruction(self, root_sha: str, session_id: str):
        """One session's :class:`~abcd_daemon.reconstruct.schema.Reconstruction`."""
        from ..reconstruct import ReconstructOptions, reconstruct

        lane = self.lane(root_sha)
        opts = ReconstructOptions(session_id=session_id, mode="full",
                                  max_block_bytes=MAX_BLOCK_BYTES)
        return reconstruct(lane, opts, now_ns=time.time_ns())

    # -- derived ---------------------------------------------------------------------
    def lane(self, root_sha: str) -> Lane:
        check_root_sha(root_sha)
        lane = Lane(self.home, root_sha)
        if not any(known.root_sha == root_sha for known in list_lanes(self.home)):
            raise NotFoundError(f"no repository {root_sha[:12]} is stored")
        return lane

    def pricing(self):
        from ..index.pricing import Pricing

        return Pricing(self._pricing_overrides)

    def refresh_index(self) -> None:
        """Bring the index level with the records (what ``abcd search`` does first).
        The server runs this in the background every :data:`SYNC_EVERY_S` seconds, so no
        page waits for it; a failure leaves what the index holds, which is still shown."""
        from ..index.db import connect, sync

        with self._sync_lock:
            try:
                conn = connect(self.home)
            except Exception:  # noqa: BLE001 - derived data: pages show no costs
                return
            try:
                sync(conn, self.home)
            except Exception:  # noqa: BLE001 - what it holds is still shown
                pass
            finally:
                conn.close()
            self._synced_at = time.monotonic()

    def index(self):
        """A connection to the index (None when it cannot be opened: pages then show no
        tokens or costs). Brought level with the records first only if it never was in
        this process (a page is then as fresh as the last background refresh)."""
        from ..index.db import connect

        if self._synced_at < 0:
            self.refresh_index()
        try:
            return connect(self.home)
        except Exception:  # noqa: BLE001 - derived data: a page without costs
            return None

    def listing_stamp(self, root_sha: str) -> tuple:
        """What a repository's session list depends on, cheaply: the identity and
        modification time of its records directory (a record is only ever added or
        removed by a rename into or out of it) and of the index's files. Equal stamps
        mean an equal list."""
        import os

        from ..index.db import index_path

        stamp = []
        for path in (str(self.lane(root_sha).records), index_path(self.home),
                     index_path(self.home) + "-wal"):
            try:
                st = os.stat(path, follow_symlinks=False)
                stamp.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                stamp.append(None)
        return tuple(stamp)

    def repositories(self) -> list[RepoRow]:
        from ..queue.survey import lane_name

        rows = []
        for lane in list_lanes(self.home):
            records = self.records(lane)
            if records:
                rows.append(RepoRow(lane.root_sha, lane_name(lane),
                                    len({r.session_id for r in records}),
                                    max(r.captured_at for r in records)))
        return sorted(rows, key=lambda r: r.last_captured_at, reverse=True)

    def repository_name(self, root_sha: str) -> str:
        from ..queue.survey import lane_name

        return lane_name(self.lane(root_sha))

    def sessions(self, root_sha: str) -> list[SessionRow]:
        """The sessions of one repository, newest first."""
        from .costs import session_sums

        lane = self.lane(root_sha)
        groups: dict[str, list[Record]] = {}
        for record in self.records(lane):
            groups.setdefault(record.session_id, []).append(record)
        conn = self.index()
        sums = {}
        if conn is not None:
            try:
                sums = session_sums(conn, root_sha, self.pricing())
            finally:
                conn.close()
        rows = []
        for sid, records in groups.items():
            s = sums.get(sid)
            last = max(r.captured_at for r in records)
            rows.append(SessionRow(sid, s.first_ns if s else 0, s.last_ns if s else 0,
                                   len(records), s.tokens if s else None,
                                   s.cost if s else None, last))
        return sorted(rows, key=lambda r: (r.started_ns or 0, r.last_captured_at), reverse=True)

    def session_records(self, root_sha: str, session_id: str) -> list[Record]:
        """The records of one session; NotFoundError when it has none."""
        records = [r for r in self.records(self.lane(root_sha)) if r.session_id == session_id]
        if not records:
            raise NotFoundError(f"no session {session_id!r} is stored in this repository")
        return records

    def thread_costs(self, root_sha: str, session_id: str):
        from .costs import thread_costs

        conn = self.index()
        if conn is None:
            return None
        try:
            return thread_costs(conn, root_sha, session_id, self.pricing()) or None
        finally:
            conn.close()

    def search(self, query: str, root_sha: str = "", limit: int = 50):
        """Search hits (:class:`abcd_daemon.index.query.Hit`) for ``query``."""
        from ..index.query import Filters, search

        if root_sha:
            check_root_sha(root_sha)
        conn = self.index()
        if conn is None:
            return []
        try:
            return search(conn, query, Filters(roots=(root_sha,) if root_sha else (),
                                               limit=limit))
        finally:
            conn.close()
