"""What the queue's verbs report: a drain pass (one outcome per entry, the pass's
totals), a discard, and one lane's backlog in the store-wide survey.

Values only (msgspec Structs and the arithmetic of adding an outcome): the wire carries
them (:mod:`abcd_daemon.wire.messages`), so this module imports nothing of the drain
itself and a client that decodes a drain reply does not load capture or the scanner.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

from ..store.record import Record


class DrainFailure(msgspec.Struct, kw_only=True, omit_defaults=True):
    root_sha: str
    name: str
    path: str
    error: str
    session_id: str = ""
    agent_id: str = ""
    permanent: bool = False
    quarantined: bool = False
    quarantine_path: str = ""


class EntryOutcome(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``status``: stored | already-stored | failed | quarantined | gone."""

    status: str
    record: Record | None = None
    #: names of the records the stored one superseded (retired from the lane)
    superseded: list[str] = []
    failure: DrainFailure | None = None
    extended: bool = False
    bytes: int = 0


class DrainResult(msgspec.Struct, kw_only=True):
    captured: list[Record] = []
    already_stored: int = 0
    failed: list[DrainFailure] = []
    quarantined: int = 0
    remaining: int = 0
    extended: int = 0
    overdue: int = 0
    attempted: int = 0

    def add(self, outcome: EntryOutcome) -> None:
        self.attempted += 1
        self.extended += int(outcome.extended)
        if outcome.status == "stored" and outcome.record is not None:
            self.captured.append(outcome.record)
        elif outcome.status == "already-stored":
            self.already_stored += 1
        elif outcome.failure is not None:
            self.failed.append(outcome.failure)
            self.quarantined += int(outcome.failure.quarantined)


class DiscardResult(msgspec.Struct, kw_only=True):
    path: str
    bytes: int
    removed: list[str]


class LaneBacklog(msgspec.Struct, kw_only=True, omit_defaults=True):
    root_sha: str
    name: str = ""
    staged: int = 0
    staged_bytes: int = 0
    overdue: int = 0
    not_drainable: int = 0
    oldest_staged_at: str = ""
    quarantined: int = 0
    quarantined_bytes: int = 0
    gap_count: int = 0
    gap_last_seen: str = ""
