"""Every message that crosses the socket, defined once for both sides.

Replies reuse the core's own Structs (Record, StagedEntry, DrainResult, …), so a value
means the same thing in-process and over the wire. Telemetry and ingest reports travel
as their JSON encoding (the CLI prints JSON anyway), and large bodies stream as
``Chunk`` frames after a head message, closed by ``End``.
"""

# No `from __future__ import annotations` in this module nor in those its types come
# from: msgspec evaluates a string annotation (a compile() each) every time a process
# builds a decoder for the type, 1-2 ms of a CLI call (tests/wire/test_annotations.py).

from typing import Union

import msgspec

from ..index.values import Hit, Report, RepositorySummary, SessionPage
from ..intake.outcome import FailedDiscard, FailedPayload, IntakeOutcome
from ..locate.gap import GapMarker
from ..queue.results import DiscardResult, DrainResult, LaneBacklog
from ..queue.entries import QuarantinedEntry, StagedEntry
from ..status import DaemonStatus, MissingReport
from ..store.record import Record
from ..store.session_ref import SessionRef

from .framing import CHUNK, MAX_FRAME, PROTOCOL_VERSION  # noqa: F401  (the frame rules, stated once)


class _Msg(msgspec.Struct, tag_field="op", kw_only=True, omit_defaults=True):
    pass


# -- handshake -------------------------------------------------------------------
class Hello(_Msg, tag="hello"):
    protocol: int
    client: str = ""


class Welcome(_Msg, tag="welcome"):
    protocol: int
    daemon_version: str
    pid: int
    #: The store this daemon serves (its ABCD_HOME, resolved): a client of another
    #: store must not show this one's records as its own.
    home: str = ""


# -- requests --------------------------------------------------------------------
class StatusRequest(_Msg, tag="status"):
    pass


class ListRequest(_Msg, tag="list"):
    root_sha: str
    session_id: str = ""


class ShowRequest(_Msg, tag="show"):
    root_sha: str
    key: str


class StagedRequest(_Msg, tag="staged"):
    root_sha: str = ""
    all_repos: bool = False


class DrainRequest(_Msg, tag="drain"):
    root_sha: str = ""
    max_bytes: int = 0
    max_count: int = 0


class DiscardRequest(_Msg, tag="discard"):
    root_sha: str
    name: str


class ReconstructRequest(_Msg, tag="reconstruct"):
    root_sha: str
    session_id: str
    mode: str = "full"
    max_block_bytes: int = 0


class BatchReconstructRequest(_Msg, tag="reconstruct-batch"):
    """Several sessions in one request: ``session_ids`` (ids or unique prefixes), or —
    none given — every session of the lane ``root_sha`` (every lane with
    ``all_repos``) with a record captured at or after ``since``. Answered by
    ``BatchPlanned``, then per session ``SessionReconstructed`` + ``Chunk``… + ``End``
    or ``SessionFailed``, then ``BatchDone``."""

    root_sha: str = ""
    all_repos: bool = False
    session_ids: list[str] = []
    since: str = ""
    mode: str = "full"
    max_block_bytes: int = 0


class MissingRequest(_Msg, tag="missing"):
    """Every harness transcript not stored yet (the client narrows it to a repository)."""


class IngestRequest(_Msg, tag="ingest"):
    roots: list[str] = []
    since: str = ""
    dry_run: bool = False
    into: str = ""
    drain: bool = True


class RetryRequest(_Msg, tag="retry"):
    """Put failed payloads (their ids, or every one) back through intake."""

    keys: list[str] = []
    everything: bool = False


class DiscardFailedRequest(_Msg, tag="discard-failed"):
    key: str


class SearchRequest(_Msg, tag="search"):
    """``abcd search``: the query and its filters (times as epoch ns, resolved by the
    client; ``roots`` empty means every repository)."""

    query: str
    roots: list[str] = []
    session: str = ""
    agent_type: str = ""
    role: str = ""
    tool: str = ""
    since_ns: int = 0
    until_ns: int = 0
    limit: int = 20


class UsageRequest(_Msg, tag="usage"):
    """``abcd usage KIND`` over ``roots`` (empty: every repository)."""

    kind: str
    roots: list[str] = []
    since_ns: int = 0
    until_ns: int = 0
    session: str = ""  # one session id (exact), or every session


class SessionsRequest(_Msg, tag="sessions"):
    """``abcd view``'s session list: one page of a repository's sessions, from the index."""

    root_sha: str
    offset: int = 0
    limit: int = 100


class RepositoriesRequest(_Msg, tag="repositories"):
    """``abcd view``'s home page: every repository the index holds, with its sessions."""


class IndexRebuildRequest(_Msg, tag="index-rebuild"):
    """``abcd index rebuild``: answered by ``Progress`` frames, then ``IndexRebuilt``."""


Request = Union[StatusRequest, ListRequest, ShowRequest, StagedRequest, DrainRequest,
                DiscardRequest, ReconstructRequest, IngestRequest, RetryRequest,
                DiscardFailedRequest, MissingRequest, BatchReconstructRequest, SearchRequest,
                UsageRequest, SessionsRequest, RepositoriesRequest, IndexRebuildRequest]


# -- replies ---------------------------------------------------------------------
class ErrorReply(_Msg, tag="error"):
    kind: str
    message: str
    hint: str = ""
    exit_code: int = 1
    #: Lines that belong to the message (an ambiguous id's candidates).
    details: list[str] = []


class StatusReply(_Msg, tag="status-reply"):
    status: DaemonStatus


class RecordsReply(_Msg, tag="records"):
    records: list[Record]


class ShowReply(_Msg, tag="show-reply"):
    record: Record
    body_bytes: int


class StagedReply(_Msg, tag="staged-reply"):
    staged: list[StagedEntry]
    quarantined: list[QuarantinedEntry]
    gap: GapMarker | None = None
    failed: list[FailedPayload] = []


class SurveyReply(_Msg, tag="survey"):
    backlog: list[LaneBacklog]
    failed: list[FailedPayload] = []


class RetryReply(_Msg, tag="retry-reply"):
    outcomes: list[IntakeOutcome]


class DiscardFailedReply(_Msg, tag="discard-failed-reply"):
    result: FailedDiscard


class DrainReply(_Msg, tag="drain-reply"):
    result: DrainResult


class DiscardReply(_Msg, tag="discard-reply"):
    result: DiscardResult


class ReconstructReply(_Msg, tag="reconstruct-reply"):
    artefact_name: str
    telemetry_name: str
    artefact_bytes: int
    #: The telemetry file's bytes, exactly as written beside the artefact.
    telemetry_json: bytes


class BatchPlanned(_Msg, tag="batch-planned"):
    """How many items (sessions, and named keys that name none) the batch answers."""

    total: int


class SessionReconstructed(_Msg, tag="session-reconstructed"):
    """One session of a batch; its artefact follows as ``Chunk`` frames and ``End``."""

    session: SessionRef
    artefact_name: str
    telemetry_name: str
    artefact_bytes: int
    telemetry_json: bytes


class SessionFailed(_Msg, tag="session-failed"):
    """One session of a batch that could not be reconstructed, and why."""

    session: SessionRef
    error: ErrorReply


class BatchDone(_Msg, tag="batch-done"):
    pass


class Progress(_Msg, tag="progress"):
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int


class IngestReply(_Msg, tag="ingest-reply"):
    report_json: bytes


class MissingReply(_Msg, tag="missing-reply"):
    report: MissingReport


class SearchReply(_Msg, tag="search-reply"):
    hits: list[Hit]


class UsageReply(_Msg, tag="usage-reply"):
    report: Report


class SessionsReply(_Msg, tag="sessions-reply"):
    page: SessionPage


class RepositoriesReply(_Msg, tag="repositories-reply"):
    repositories: list[RepositorySummary]


class IndexRebuilt(_Msg, tag="index-rebuilt"):
    indexed: int


class Chunk(_Msg, tag="chunk"):
    data: bytes


class End(_Msg, tag="end"):
    pass


Reply = Union[ErrorReply, StatusReply, RecordsReply, ShowReply, StagedReply, SurveyReply,
              DrainReply, DiscardReply, ReconstructReply, Progress, IngestReply, RetryReply,
              DiscardFailedReply, MissingReply, Chunk, End, BatchPlanned,
              SessionReconstructed, SessionFailed, BatchDone, SearchReply, UsageReply,
              SessionsReply, RepositoriesReply, IndexRebuilt]

#: What answers each request besides an ErrorReply: its head reply and, for a streaming
#: reply, the Progress / Chunk / End frames around it. A client decodes only these (a
#: decoder of the whole union costs a CLI start-up ~10 ms to build).
ANSWERS: dict[type, tuple[type, ...]] = {
    StatusRequest: (StatusReply,),
    ListRequest: (RecordsReply,),
    ShowRequest: (ShowReply, Chunk, End),
    StagedRequest: (StagedReply, SurveyReply),
    DrainRequest: (Progress, DrainReply),
    DiscardRequest: (DiscardReply,),
    ReconstructRequest: (ReconstructReply, Chunk, End),
    IngestRequest: (Progress, IngestReply),
    RetryRequest: (RetryReply,),
    DiscardFailedRequest: (DiscardFailedReply,),
    MissingRequest: (MissingReply,),
    BatchReconstructRequest: (BatchPlanned, SessionReconstructed, SessionFailed, Chunk, End,
                              BatchDone),
    SearchRequest: (SearchReply,),
    UsageRequest: (UsageReply,),
    SessionsRequest: (SessionsReply,),
    RepositoriesRequest: (RepositoriesReply,),
    IndexRebuildRequest: (Progress, IndexRebuilt),
}

Message = Union[(Hello, Welcome) + Request.__args__ + Reply.__args__]  # type: ignore[valid-type]
#: The ``op`` of every request this daemon answers (named in a refusal of any other).
REQUEST_OPS = tuple(t.__struct_config__.tag for t in Request.__args__)
