"""The viewer's source when a daemon runs: every read the CLI serves comes from it.

:class:`DaemonSource` is :class:`abcd_daemon.web.source.LocalSource` with the reads
the CLI also asks the daemon for — a lane's record listing (``ListRequest``, as
``abcd history list``), a session's reconstruction (``ReconstructRequest``, as
``abcd history reconstruct``), a search (``SearchRequest``, as ``abcd search``), a
usage report (``UsageRequest``, as ``abcd usage``), a page of the session list
(``SessionsRequest``) and the repositories (``RepositoriesRequest``), both from the
daemon's index — sent to the daemon when one answers
for this store, and run in-process by the same core when none does (checked per
request, so a daemon started or stopped while the viewer runs is followed). A
daemon's refusal is raised as the :class:`~abcd_daemon.errors.AbcdError` it carries.
"""

from __future__ import annotations

from abcd_daemon.web.source import MAX_BLOCK_BYTES, LocalSource


class DaemonSource(LocalSource):
    def refresh_index(self) -> None:
        """Nothing while a daemon answers (its keeper keeps the index level); the
        in-process keeper's refresh otherwise, for the reads that then run here."""
        from abcd_daemon.errors import AbcdError

        from .connect import daemon

        try:
            client = daemon()
        except AbcdError:  # a busy daemon is still the one keeping the index
            return
        if client is None:
            super().refresh_index()
            return
        client.close()

    def records(self, lane):
        from abcd_daemon.wire.messages import ListRequest

        from .connect import ask

        reply = ask(ListRequest(root_sha=lane.root_sha))
        if reply is None:
            return super().records(lane)
        return reply.records

    def session_records(self, root_sha: str, session_id: str):
        """One session's records: ``ListRequest`` narrowed to the session (the daemon
        sends those, not the whole lane's)."""
        from abcd_daemon.errors import NotFoundError
        from abcd_daemon.ids import is_valid_id
        from abcd_daemon.wire.messages import ListRequest

        from .connect import ask

        lane = self.lane(root_sha)
        if not is_valid_id(session_id):
            raise NotFoundError(f"no session {session_id!r} is stored in this repository")
        reply = ask(ListRequest(root_sha=lane.root_sha, session_id=session_id))
        if reply is None:
            return super().session_records(root_sha, session_id)
        records = [r for r in reply.records if r.session_id == session_id]  # never a prefix's
        if not records:
            raise NotFoundError(f"no session {session_id!r} is stored in this repository")
        return records

    def reconstruction(self, root_sha: str, session_id: str):
        from abcd_daemon.wire.messages import ReconstructRequest

        from .connect import ask
        from .reconstruct_files import served

        self.lane(root_sha)
        answered = ask(ReconstructRequest(root_sha=root_sha, session_id=session_id, mode="full",
                                          max_block_bytes=MAX_BLOCK_BYTES), stream=True)
        if answered is None:
            return super().reconstruction(root_sha, session_id)
        return served(*answered)

    def repository_summaries(self):
        from abcd_daemon.wire.messages import RepositoriesRequest

        from .connect import ask

        reply = ask(RepositoriesRequest())
        if reply is None:
            return super().repository_summaries()
        return reply.repositories

    def session_page(self, root_sha: str, offset: int = 0, limit: int = 100):
        from abcd_daemon.wire.messages import SessionsRequest

        from .connect import ask

        self.lane(root_sha)
        reply = ask(SessionsRequest(root_sha=root_sha, offset=offset, limit=limit))
        if reply is None:
            return super().session_page(root_sha, offset, limit)
        return reply.page

    def usage(self, kind: str, root_sha: str, *, session: str = ""):
        from abcd_daemon.wire.messages import UsageRequest

        from .connect import ask

        reply = ask(UsageRequest(kind=kind, roots=[root_sha], session=session))
        if reply is None:
            return super().usage(kind, root_sha, session=session)
        return reply.report

    def search(self, query: str, root_sha: str = "", limit: int = 50):
        from abcd_daemon.wire.messages import SearchRequest

        from .connect import ask

        reply = ask(SearchRequest(query=query, roots=[root_sha] if root_sha else [], limit=limit))
        if reply is None:
            return super().search(query, root_sha, limit)
        return reply.hits
