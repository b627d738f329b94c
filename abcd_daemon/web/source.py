"""Where the viewer's data comes from: the same read core as the CLI, in-process.

:class:`LocalSource` answers every question the pages ask — repositories, a
repository's sessions, one session's reconstruction, its per-thread costs, a search —
from the store and its index. Each answer is the CLI's own: the record listing
(``abcd history list``), the reconstruction (``abcd history reconstruct``), the
usage report (``abcd usage``: session and per-agent tokens and cost), the search
(``abcd search``) and the session list (:mod:`abcd_daemon.index.sessions`, the index
alone). The client's ``DaemonSource`` (:mod:`abcd_client.view_source`) sends each of
those to the daemon when one runs, so a page shows exactly what the CLI would.

Contracts:
- read-only towards the store: nothing here writes a record, a staging entry or a
  note. The one thing written is the derived index, kept level with the records by
  an :class:`~abcd_daemon.index.keeper.IndexKeeper` as the daemon keeps it (a read
  syncs a lane whose records changed; :meth:`LocalSource.refresh_index` runs in the
  server's background);
- every id coming from a URL is checked before it names a path (a root SHA by
  :func:`~abcd_daemon.ids.check_root_sha`, a session id by the record listing it
  must appear in); an unknown one is :class:`~abcd_daemon.errors.NotFoundError`;
- reconstruction uses the CLI's defaults (full mode, 8 KiB per-block cap).

Synchronous; the server calls it from worker threads (it is safe to share: the keeper
gives each thread its own reader and serialises syncs).
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


class LocalSource:
    """The in-process core over ``home`` (a :class:`~abcd_daemon.paths.Home`)."""

    def __init__(self, home, pricing_overrides=None) -> None:
        self.home = home
        self._pricing_overrides = dict(pricing_overrides or {})
        self._keeper_lock = threading.Lock()
        self._keeper = None

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

    def keeper(self):
        """This process's :class:`~abcd_daemon.index.keeper.IndexKeeper` (the daemon's own
        hold on the index: a read first syncs only the lanes whose records changed)."""
        with self._keeper_lock:
            if self._keeper is None:
                from ..index.keeper import IndexKeeper

                self._keeper = IndexKeeper(self.home)
            return self._keeper

    def refresh_index(self) -> None:
        """Bring the index level with the records of every lane that changed (what
        ``abcd search`` does first). The server runs this in the background every
        :data:`SYNC_EVERY_S` seconds, so a page rarely waits for a sync; a failure leaves
        what the index holds, which is still shown."""
        try:
            self.keeper().refresh()
        except Exception:  # noqa: BLE001 - derived data: what it holds is still shown
            pass

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

    def repositories(self) -> list[RepoRow] | None:
        """Every repository with a session, its latest capture first, named by its
        repository note; None when the index cannot be read."""
        from ..queue.survey import lane_name

        summaries = self.repository_summaries()
        if summaries is None:
            return None
        known = {lane.root_sha: lane for lane in list_lanes(self.home)}
        return [RepoRow(r.root, lane_name(known[r.root]), r.sessions, r.last_captured_at)
                for r in summaries if r.root in known]

    def repository_name(self, root_sha: str) -> str:
        from ..queue.survey import lane_name

        return lane_name(self.lane(root_sha))

    def session_records(self, root_sha: str, session_id: str) -> list[Record]:
        """The records of one session; NotFoundError when it has none."""
        records = [r for r in self.records(self.lane(root_sha)) if r.session_id == session_id]
        if not records:
            raise NotFoundError(f"no session {session_id!r} is stored in this repository")
        return records

    def thread_costs(self, root_sha: str, session_id: str) -> dict[str, tuple[float, int]] | None:
        """Lane key (``main`` or the agent id) → (USD, unpriced tokens) for one session:
        the ``agent`` rows of the usage report narrowed to it (None when the index holds
        nothing of it)."""
        report = self.usage("agent", root_sha, session=session_id)
        if report is None or not report.rows:
            return None
        return {row.key: (row.cost_usd, row.unpriced_tokens) for row in report.rows}

    # -- the index's answers (overridden by the daemon-served source) --------------------
    def _read(self, roots: tuple[str, ...], answer):
        """``answer(conn)`` on the index once the lanes of ``roots`` (every lane when
        empty) are level with their records (:meth:`IndexKeeper.read`); None when it
        cannot be opened or read — the pages then show ``—`` for what it would say."""
        import sqlite3

        try:
            return self.keeper().read(roots, answer)
        except (sqlite3.Error, OSError):
            return None

    def repository_summaries(self):
        """The index's repositories (:func:`abcd_daemon.index.sessions.repositories`),
        every lane level first; None without an index."""
        from ..index.sessions import repositories

        return self._read((), repositories)

    def session_page(self, root_sha: str, offset: int = 0, limit: int = 100):
        """One page (:class:`~abcd_daemon.index.values.SessionPage`) of a repository's
        sessions, newest first, read from the index alone; None without an index."""
        from ..index.sessions import session_page

        self.lane(root_sha)
        return self._read((root_sha,), lambda conn: session_page(conn, root_sha, self.pricing(),
                                                    offset=offset, limit=limit))

    def usage(self, kind: str, root_sha: str, *, session: str = ""):
        """``abcd usage KIND`` over one repository (narrowed to ``session``): a
        :class:`~abcd_daemon.index.values.Report`, or None without an index."""
        from ..index.usage import report

        check_root_sha(root_sha)
        return self._read((root_sha,), lambda conn: report(conn, kind, self.pricing(), roots=(root_sha,),
                                              session=session))

    def search(self, query: str, root_sha: str = "", limit: int = 50):
        """``abcd search QUERY`` (over one repository when ``root_sha``): its hits
        (:class:`~abcd_daemon.index.values.Hit`), best first."""
        from ..index.query import Filters, search

        if root_sha:
            check_root_sha(root_sha)
        roots = (root_sha,) if root_sha else ()
        hits = self._read(roots, lambda conn: search(conn, query, Filters(
            roots=roots, limit=limit)))
        return hits or []
