"""The daemon's status: what ``abcd daemon status`` shows and what ``status.json``
holds for the session-start shim. Pure values; the daemon fills them in."""

from __future__ import annotations

import msgspec

from .queue.survey import LaneBacklog


class PassSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    finished_at: str = ""
    seconds: float = 0.0
    stored: int = 0
    already_stored: int = 0
    failed: int = 0
    quarantined: int = 0
    extended: int = 0
    remaining: int = 0


class WatchRootState(msgspec.Struct, kw_only=True, omit_defaults=True):
    path: str
    state: str  # watching | missing (waiting for it to return) | off
    staged: int = 0
    skipped: int = 0
    last_error: str = ""


class RefusedSpool(msgspec.Struct, kw_only=True):
    """A spool directory intake will not sweep (another owner, writable by others, a
    symlink): ``reason`` names it, says why and what to do."""

    path: str
    reason: str


class DaemonStatus(msgspec.Struct, kw_only=True, omit_defaults=True):
    schema: int = 1
    version: str = ""
    pid: int = 0
    started_at: str = ""
    updated_at: str = ""
    uptime_s: float = 0.0
    socket: str = ""
    socket_activated: bool = False
    home: str = ""
    staged: int = 0
    staged_bytes: int = 0
    overdue: int = 0
    not_drainable: int = 0
    quarantined: int = 0
    quarantined_bytes: int = 0
    spool_pending: int = 0
    #: Payloads intake could not use, kept (unredacted) in spool/failed with a reason.
    spool_failed: int = 0
    spool_failed_bytes: int = 0
    #: Payloads of hook events abcd does not handle, dropped since the daemon started.
    events_dropped: int = 0
    refused_spools: list[RefusedSpool] = []
    #: The scanner captures redact with now, and how many stored records an older
    #: one redacted (``abcd history rescan`` brings them up to date).
    scanner: str = ""
    stale_records: int = 0
    intake_total: int = 0
    stored_total: int = 0
    passes: int = 0
    last_pass: PassSummary | None = None
    last_error: str = ""
    watch_roots: list[WatchRootState] = []
    lanes: list[LaneBacklog] = []


def summarise(status: DaemonStatus, lanes: list[LaneBacklog]) -> DaemonStatus:
    """Fill the queue totals of ``status`` from a survey of every lane."""
    status.lanes = lanes
    status.staged = sum(x.staged for x in lanes)
    status.staged_bytes = sum(x.staged_bytes for x in lanes)
    status.overdue = sum(x.overdue for x in lanes)
    status.not_drainable = sum(x.not_drainable for x in lanes)
    status.quarantined = sum(x.quarantined for x in lanes)
    status.quarantined_bytes = sum(x.quarantined_bytes for x in lanes)
    return status
