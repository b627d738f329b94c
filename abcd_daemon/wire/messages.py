"""Every message that crosses the socket, defined once for both sides.

Replies reuse the core's own Structs (Record, StagedEntry, DrainResult, …), so a value
means the same thing in-process and over the wire. Telemetry and ingest reports travel
as their JSON encoding (the CLI prints JSON anyway), and large bodies stream as
``Chunk`` frames after a head message, closed by ``End``.
"""

from __future__ import annotations

from typing import Union

import msgspec

from ..intake.failed import FailedDiscard, FailedPayload
from ..intake.take import IntakeOutcome
from ..locate.notes import GapMarker
from ..queue.discard import DiscardResult
from ..queue.drain import DrainResult
from ..queue.staged import QuarantinedEntry, StagedEntry
from ..queue.survey import LaneBacklog
from ..status import DaemonStatus, MissingReport
from ..store.record import Record

PROTOCOL_VERSION = 1
#: No frame in either direction is larger; bodies stream in CHUNK-sized pieces.
MAX_FRAME = 4 << 20
CHUNK = 1 << 20


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


Request = Union[StatusRequest, ListRequest, ShowRequest, StagedRequest, DrainRequest,
                DiscardRequest, ReconstructRequest, IngestRequest, RetryRequest,
                DiscardFailedRequest, MissingRequest]


# -- replies ---------------------------------------------------------------------
class ErrorReply(_Msg, tag="error"):
    kind: str
    message: str
    hint: str = ""
    exit_code: int = 1


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
    telemetry_json: bytes


class Progress(_Msg, tag="progress"):
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int


class IngestReply(_Msg, tag="ingest-reply"):
    report_json: bytes


class MissingReply(_Msg, tag="missing-reply"):
    report: MissingReport


class Chunk(_Msg, tag="chunk"):
    data: bytes


class End(_Msg, tag="end"):
    pass


Reply = Union[ErrorReply, StatusReply, RecordsReply, ShowReply, StagedReply, SurveyReply,
              DrainReply, DiscardReply, ReconstructReply, Progress, IngestReply, RetryReply,
              DiscardFailedReply, MissingReply, Chunk, End]

Message = Union[(Hello, Welcome) + Request.__args__ + Reply.__args__]  # type: ignore[valid-type]
#: The ``op`` of every request this daemon answers (named in a refusal of any other).
REQUEST_OPS = tuple(t.__struct_config__.tag for t in Request.__args__)
