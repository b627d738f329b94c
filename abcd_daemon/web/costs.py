"""What the viewer reads from the search and usage index: per-session totals and time
spans for the session list, per-thread cost for the bars.

Contracts:
- session tokens and cost are :func:`abcd_daemon.index.usage.report`'s ``session``
  rows (one definition of a cost: per response, long-context tier per response,
  unpriced models counted apart, never priced at zero);
- a thread's cost groups the same response rows by thread, model and tier exactly as
  that report groups them by session, and prices the sums with the same
  :meth:`~abcd_daemon.index.pricing.Pricing.cost_of_sums`;
- a session's span is its first and last turn time in the index;
- the index is derived data: a connection that fails, or a session it does not hold
  yet, gives empty answers — the caller shows ``—``, never a guess.

Synchronous (SQLite); callers in the server run these in a worker thread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ..index.pricing import LONG_PROMPT, Pricing
from ..index.usage import report
from .outline import MAIN


@dataclass
class SessionSums:
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced_tokens: int = 0
    first_ns: int = 0
    last_ns: int = 0

    @property
    def cost(self) -> tuple[float, int]:
        return self.cost_usd, self.unpriced_tokens


def session_sums(conn: sqlite3.Connection, root: str, pricing: Pricing) -> dict[str, SessionSums]:
    """Session id → its :class:`SessionSums`, for every session of ``root`` the index holds."""
    out: dict[str, SessionSums] = {}
    try:
        for row in report(conn, "session", pricing, roots=(root,)).rows:
            out[row.key] = SessionSums(row.total, row.cost_usd, row.unpriced_tokens)
        for sid, first, last in conn.execute(
                "SELECT session_id, min(when_ns), max(when_ns) FROM turns "
                "WHERE root = ? AND when_ns > 0 GROUP BY session_id", (root,)):
            sums = out.setdefault(sid, SessionSums())
            sums.first_ns, sums.last_ns = first, last
    except sqlite3.Error:
        return {}
    return out


def thread_costs(conn: sqlite3.Connection, root: str, session_id: str,
                 pricing: Pricing) -> dict[str, tuple[float, int]]:
    """Lane key (``main`` or the agent id) → (USD, unpriced tokens) for one session."""
    out: dict[str, list] = {}
    try:
        rows = conn.execute(
            "SELECT thread, model, (input + cache_creation + cache_read) > ? AS long, "
            "sum(input), sum(output), sum(cache_creation), sum(cache_read) FROM responses "
            "WHERE root = ? AND session_id = ? GROUP BY 1, 2, 3",
            (LONG_PROMPT, root, session_id)).fetchall()
    except sqlite3.Error:
        return {}
    for thread, model, long, i, o, cw, cr in rows:
        cost = pricing.cost_of_sums(model, bool(long), i, o, cw, cr)
        entry = out.setdefault(thread or MAIN, [0.0, 0])
        if cost is None:
            entry[1] += i + o + cw + cr
        else:
            entry[0] += cost
    return {key: (usd, unpriced) for key, (usd, unpriced) in out.items()}
