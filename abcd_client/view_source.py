"""The viewer's source when a daemon runs: records and reconstructions come from it.

:class:`DaemonSource` is :class:`abcd_daemon.web.source.LocalSource` with the two
reads the CLI also asks the daemon for — a lane's record listing (``ListRequest``,
as ``abcd history list``) and a session's reconstruction (``ReconstructRequest``, as
``abcd history reconstruct``) — sent to the daemon when one answers for this store,
and run in-process when none does (checked per request, so a daemon started or
stopped while the viewer runs is followed). Index reads (costs, search) stay
in-process, as ``abcd search`` and ``abcd usage`` do.
"""

from __future__ import annotations

from abcd_daemon.web.source import MAX_BLOCK_BYTES, LocalSource


class DaemonSource(LocalSource):
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
