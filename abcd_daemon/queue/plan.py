"""Drain planning: which staged entries a pass takes, in which order. Pure.

Rules (seed 003 "The drain's order and its budget", reference §4.2-4.3):
- Order: overdue entries first; within each half, main-thread entries before sub-agent
  entries (a session's spine is staged last because it ends last, so a truncated pass
  must still store the part that makes the rest legible); oldest first within each
  quarter (the filename stamp is the arrival time).
- Budget: bytes and count, whichever is reached first; a pass never declares itself
  exhausted before its first entry, so one transcript larger than the byte bound is not
  skipped by every pass forever.
- Entries that cannot be drained (``error`` set) are not taken and cost no budget; they
  are returned in ``broken`` so every pass reports them. (Our choice: the Go system
  charged them to the budget, which lets enough broken entries starve the queue.)
"""

from __future__ import annotations

import dataclasses

from ..config import DrainBudget
from .staged import StagedEntry


@dataclasses.dataclass(frozen=True)
class PassPlan:
    take: list[StagedEntry]
    broken: list[StagedEntry]
    remaining: int
    overdue: int
    take_bytes: int


def drain_order(entries: list[StagedEntry]) -> list[StagedEntry]:
    """``entries`` in drain order (see module rules). Stable, total, pure."""
    return sorted(
        entries,
        key=lambda e: (not e.overdue, 0 if e.is_main_thread else 1, e.name, e.root_sha),
    )


def exhausted(budget: DrainBudget, attempted: int, consumed: int, next_bytes: int) -> bool:
    """True when a pass that has attempted ``attempted`` entries totalling ``consumed``
    bytes must stop before an entry of ``next_bytes``. Never true for the first entry."""
    if attempted == 0:
        return False
    if budget.max_count > 0 and attempted >= budget.max_count:
        return True
    return budget.max_bytes > 0 and consumed + next_bytes > budget.max_bytes


def plan_pass(entries: list[StagedEntry], budget: DrainBudget) -> PassPlan:
    """Plan one pass over ``entries`` (from one lane or many) under ``budget``."""
    broken = [e for e in entries if e.error]
    ordered = drain_order([e for e in entries if not e.error])
    take: list[StagedEntry] = []
    consumed = 0
    remaining = 0
    for i, entry in enumerate(ordered):
        if exhausted(budget, len(take), consumed, entry.bytes):
            remaining = len(ordered) - i
            break
        take.append(entry)
        consumed += entry.bytes
    return PassPlan(
        take=take,
        broken=broken,
        remaining=remaining,
        overdue=sum(1 for e in ordered if e.overdue),
        take_bytes=consumed,
    )
