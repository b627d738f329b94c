"""The daemon's status: what ``abcd daemon status`` shows and what ``status.json``
holds for the session-start shim, and the coverage report of ``abcd history missing``
(:mod:`abcd_daemon.ingest.missing` builds it). Pure values; the daemon fills them in."""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

from .queue.results import LaneBacklog


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
    state: str  # starting | catching-up | watching | missing (waiting for it to appear)
    staged: int = 0
    skipped: int = 0
    last_error: str = ""
    #: The start-up catch-up: when it finished, how long it took, what it staged.
    caught_up_at: str = ""
    catch_up_s: float = 0.0
    caught_up: int = 0


class MissingSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Harness transcripts not stored yet (``abcd history missing`` lists them): the
    count per reason — queued ones are in the queue figures instead — and the fewest
    days any of them has left before the harness's retention deletes it."""

    total: int = 0
    reasons: dict[str, int] = {}
    soonest_days_left: int | None = None
    checked_at: str = ""


#: Why a harness transcript is not stored, in the order they are tried (see
#: :mod:`abcd_daemon.ingest.missing`).
REASONS = ("over-cap", "refused", "no-repository", "staged", "settling", "pending")
#: What the queue figures already count: left out of the status summary.
QUEUED = ("staged",)


class MissingItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One harness transcript not stored: why, and the days before the harness's
    retention deletes it (None: that store's retention is unknown)."""

    path: str
    reason: str
    detail: str = ""
    bytes: int = 0
    modified_at: str = ""
    days_left: int | None = None
    session_id: str = ""
    agent_id: str = ""
    root_sha: str = ""


class MissingReport(msgspec.Struct, kw_only=True):
    """``checked`` transcripts under ``roots``; ``stored`` of them are; ``items`` are
    not (soonest deletion first)."""

    roots: list[str]
    checked: int = 0
    stored: int = 0
    items: list[MissingItem] = []

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for item in self.items:
            out[item.reason] = out.get(item.reason, 0) + 1
        return {r: out[r] for r in REASONS if r in out}

    def only_lane(self, root_sha: str) -> "MissingReport":
        """The items of one repository (the rest are counted in ``checked`` only)."""
        return MissingReport(roots=self.roots, checked=self.checked, stored=self.stored,
                             items=[i for i in self.items if i.root_sha == root_sha])


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
    harness_store: WatchRootState | None = None
    watch_roots: list[WatchRootState] = []
    followed_sessions: int = 0
    missing: MissingSummary | None = None
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
