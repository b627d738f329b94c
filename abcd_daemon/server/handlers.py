"""Answering requests: each request type maps to one synchronous core call.

Handlers run in worker threads (never on the event loop), return a reply message and,
for streaming replies, a body to send as ``Chunk`` frames. Every ``AbcdError`` becomes an
``ErrorReply`` carrying the same message, hint and exit code the CLI would have shown
in-process; anything else becomes an ``InternalError`` reply and is logged.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time

import msgspec

from ..config import Config, DrainBudget
from ..errors import AbcdError, InputError
from ..ids import check_root_sha
from ..limits import STREAM_ABOVE
from ..index.values import REPORTS, ROLES
from ..intake.failed import discard_failed, list_failed, retry_failed
from ..locate.notes import read_gap
from ..paths import Home
from ..queue.discard import discard
from ..queue.drain import drain_pass
from ..queue.staged import list_quarantined, list_staged
from ..queue.survey import survey_backlog
from ..store.lane import Lane, list_lanes
from ..store.body import body_of
from ..store.records import list_for_session, list_records
from ..store.sessions import expand_session, resolve_record
from ..wire import messages as m

log = logging.getLogger("abcd.daemon")

#: Requests whose handler takes a progress callback (their replies stream Progress).
_PROGRESSING = (m.IngestRequest, m.DrainRequest, m.IndexRebuildRequest)


def _blocks_of(f):
    """The content of the temp file ``f``, from its start, in ``Chunk``-sized blocks;
    closes it at the end (or when the stream is abandoned)."""
    with f:
        f.seek(0)
        while True:
            block = f.read(m.CHUNK)
            if not block:
                return
            yield block


def error_reply(exc: BaseException) -> m.ErrorReply:
    if isinstance(exc, AbcdError):
        return m.ErrorReply(kind=type(exc).__name__, message=str(exc), hint=exc.hint,
                            exit_code=exc.exit_code, details=list(exc.details))
    log.exception("request failed unexpectedly")
    return m.ErrorReply(kind="InternalError",
                        message=f"the daemon failed on this request ({type(exc).__name__}: {exc})",
                        hint="see the daemon's log (journalctl --user -u abcd)")


class Handlers:
    """The daemon's request handlers; thread-safe (drains serialise on ``drain_lock``)."""

    def __init__(self, home: Home, config: Config, scanners, *, drain_lock: threading.Lock,
                 status=None, take_one=None, missing=None,
                 intake_lock: threading.RLock | None = None, index=None) -> None:
        self.home = home
        self.config = config
        self.scanners = scanners
        self.drain_lock = drain_lock
        self.status = status
        #: intake's take of one spooled file (the daemon's, serialised with its loop)
        self.take_one = take_one
        self.intake_lock = intake_lock if intake_lock is not None else threading.RLock()
        self.missing = missing
        #: the daemon's :class:`~abcd_daemon.index.keeper.IndexKeeper`
        self.index = index

    def lane(self, root_sha: str) -> Lane:
        return Lane(self.home, root_sha)

    def handle(self, req, progress=None) -> tuple[object, object]:
        """Answer ``req``. Returns (reply, body); body is b"" for non-streaming replies,
        and for a large one an iterator of byte blocks read as it is sent (a record
        body, an artefact spilled to a temp file), so no reply is held whole."""
        try:
            method = getattr(self, "_" + type(req).__name__)
            result = method(req, progress) if type(req) in _PROGRESSING else method(req)
            return result if isinstance(result, tuple) else (result, b"")
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a reply
            return error_reply(exc), b""

    def _StatusRequest(self, req):
        return m.StatusReply(status=self.status())

    def _ListRequest(self, req):
        lane = self.lane(req.root_sha)
        if req.session_id:
            records = list_for_session(lane, expand_session([lane], req.session_id))
        else:
            records = list_records(lane)
        return m.RecordsReply(records=records)

    def _ShowRequest(self, req):
        lane = self.lane(req.root_sha)
        record = resolve_record(lane, req.key)
        body = body_of(lane, record)
        if body.length <= STREAM_ABOVE:
            data = body.read()
            return m.ShowReply(record=record, body_bytes=len(data)), data
        return m.ShowReply(record=record, body_bytes=body.length), body.chunks(m.CHUNK)

    def _StagedRequest(self, req):
        now = time.time_ns()
        failed = list_failed(self.home)
        if req.all_repos:
            return m.SurveyReply(backlog=survey_backlog(self.home, now_ns=now, ttl_s=self.config.staged_ttl_s),
                                 failed=failed)
        lane = self.lane(req.root_sha)
        return m.StagedReply(staged=list_staged(lane, now_ns=now, ttl_s=self.config.staged_ttl_s),
                             quarantined=list_quarantined(lane), gap=read_gap(lane), failed=failed)

    def _MissingRequest(self, req):
        return m.MissingReply(report=self.missing(now_ns=time.time_ns()))

    def _DrainRequest(self, req, progress=None):
        lanes = [self.lane(req.root_sha)] if req.root_sha else list_lanes(self.home)
        with self.drain_lock:
            result = drain_pass(lanes, DrainBudget(max_bytes=req.max_bytes, max_count=req.max_count),
                                scanners=self.scanners, config=self.config, progress=progress)
        return m.DrainReply(result=result)

    def _DiscardRequest(self, req):
        return m.DiscardReply(result=discard(self.lane(req.root_sha), req.name,
                                             config=self.config, now_ns=time.time_ns()))

    def _RetryRequest(self, req):
        with self.intake_lock:  # moved back and taken as one step (see retry_failed)
            outcomes = retry_failed(self.home, req.keys, everything=req.everything,
                                    take_one=self.take_one)
        return m.RetryReply(outcomes=outcomes)

    def _DiscardFailedRequest(self, req):
        return m.DiscardFailedReply(result=discard_failed(self.home, req.key))

    def _ReconstructRequest(self, req):
        from ..reconstruct import ReconstructOptions, reconstruct

        lane = self.lane(req.root_sha)
        session_id = expand_session([lane], req.session_id)  # a short id, expanded
        options = ReconstructOptions(session_id=session_id, mode=req.mode,
                                     max_block_bytes=req.max_block_bytes)
        large = sum(r.body_bytes for r in list_for_session(lane, session_id)) > STREAM_ABOVE
        spill = tempfile.TemporaryFile(dir=self.home.root) if large else None
        try:
            r = reconstruct(lane, options, now_ns=time.time_ns(), sink=spill,
                            spill_dir=self.home.root)
        except BaseException:
            if spill is not None:
                spill.close()
            raise
        head = m.ReconstructReply(artefact_name=r.artefact_name, telemetry_name=r.telemetry_name,
                                  artefact_bytes=r.artefact_bytes,
                                  telemetry_json=r.telemetry_json())
        return head, (r.artefact if spill is None else _blocks_of(spill))

    def _IngestRequest(self, req, progress):
        from ..ingest import ingest_request

        report = ingest_request(self.home, req, config=self.config, scanners=self.scanners,
                                drain_lock=self.drain_lock, progress=progress)
        return m.IngestReply(report_json=msgspec.json.encode(report))

    def _SearchRequest(self, req):
        from ..index.query import Filters, search

        roots = tuple(check_root_sha(r) for r in req.roots)  # a lane name, never a path
        if req.role and req.role not in ROLES:
            raise InputError(f"--role must be one of {', '.join(ROLES)}, not {req.role!r}")
        f = Filters(roots=roots, session=req.session, agent_type=req.agent_type, role=req.role, tool=req.tool,
                    since_ns=req.since_ns, until_ns=req.until_ns, limit=req.limit)
        try:
            return m.SearchReply(hits=self.index.read(f.roots, lambda conn: search(conn, req.query, f)))
        except ValueError as exc:  # a filter out of range: the user's input, said as such
            raise InputError(str(exc)) from None

    def _UsageRequest(self, req):
        from ..config import load_config
        from ..index.pricing import Pricing
        from ..index.usage import report

        # config.toml is read again: a price edited there counts without a restart
        pricing = Pricing(dict(load_config(self.home.config_file).pricing))
        roots = tuple(check_root_sha(r) for r in req.roots)  # a lane name, never a path
        if req.kind not in REPORTS:
            raise InputError(f"unknown report {req.kind!r}; one of {', '.join(REPORTS)}")
        try:
            rep = self.index.read(roots, lambda conn: report(
                conn, req.kind, pricing, roots=roots, since_ns=req.since_ns, until_ns=req.until_ns,
                session=req.session))
        except ValueError as exc:
            raise InputError(str(exc)) from None
        return m.UsageReply(report=rep)

    def _SessionsRequest(self, req):
        from ..config import load_config
        from ..index.pricing import Pricing
        from ..index.sessions import session_page

        root = check_root_sha(req.root_sha)  # a lane name, never a path
        pricing = Pricing(dict(load_config(self.home.config_file).pricing))
        return m.SessionsReply(page=self.index.read((root,), lambda conn: session_page(
            conn, root, pricing, offset=req.offset, limit=req.limit)))

    def _RepositoriesRequest(self, req):
        from ..index.sessions import repositories

        return m.RepositoriesReply(repositories=self.index.read((), repositories))

    def _IndexRebuildRequest(self, req, progress=None):
        def each(done: int, total: int) -> None:
            if progress is not None:
                progress(done, total, 0, 0)

        return m.IndexRebuilt(indexed=self.index.rebuild(each))
