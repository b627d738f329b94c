"""The backlog survey across every lane: what is waiting, where, for how long.

Counts, sizes, ages and repository names only — never another repository's session
ids or paths (seed 003): the survey is shown in sessions of other repositories.
Lanes holding nothing (no staged, quarantined or gap marker) are skipped.
"""

from __future__ import annotations

import msgspec

from ..errors import UNDECODABLE, AbcdError
from ..fsio.guarded import read_guarded
from ..limits import SIDECAR_CAP
from ..locate.notes import read_gap
from ..paths import Home
from ..store.lane import Lane, list_lanes
from ..store.record import format_rfc3339_ns
from .results import LaneBacklog
from .staged import list_quarantined, list_staged

REPOSITORY_NOTE = "repository.json"


class RepositoryNote(msgspec.Struct):
    name: str


def lane_name(lane: Lane) -> str:
    """The repository's name as last seen by intake (best effort, "" when unknown)."""
    try:
        return msgspec.json.decode(
            read_guarded(lane.path / REPOSITORY_NOTE, SIDECAR_CAP), type=RepositoryNote
        ).name
    except (AbcdError, *UNDECODABLE):
        return ""


def survey_lane(lane: Lane, *, now_ns: int, ttl_s: float) -> LaneBacklog:
    staged = list_staged(lane, now_ns=now_ns, ttl_s=ttl_s)
    quarantined = list_quarantined(lane)
    gap = read_gap(lane)
    backlog = LaneBacklog(
        root_sha=lane.root_sha,
        name=lane_name(lane),
        staged=len(staged),
        staged_bytes=sum(e.bytes for e in staged),
        overdue=sum(1 for e in staged if e.overdue),
        not_drainable=sum(1 for e in staged if e.error),
        quarantined=len(quarantined),
        quarantined_bytes=sum(q.bytes for q in quarantined),
    )
    stamps = [e.staged_ns for e in staged if e.staged_ns]
    if stamps:
        backlog.oldest_staged_at = format_rfc3339_ns(min(stamps))
    if gap is not None:
        backlog.gap_count, backlog.gap_last_seen = gap.count, gap.last_seen
    return backlog


def survey_backlog(home: Home, *, now_ns: int, ttl_s: float) -> list[LaneBacklog]:
    """One entry per lane holding anything, sorted by root SHA."""
    out = []
    for lane in list_lanes(home):
        backlog = survey_lane(lane, now_ns=now_ns, ttl_s=ttl_s)
        if backlog.staged or backlog.quarantined or backlog.gap_count:
            out.append(backlog)
    return out
