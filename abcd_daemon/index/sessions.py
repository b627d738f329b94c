"""A repository's sessions, and the repositories, read from the index alone: the
viewer's session list and home page.

Contracts:
- a session is every indexed record sharing a ``session_id`` under one root; its
  ``agents`` is how many records it has, ``last_captured_at`` their latest capture
  time, ``first_ns``/``last_ns`` its earliest and latest turn time (0 when no turn
  carries a time);
- its tokens and cost are the ``session`` row of :func:`.usage.report` over the same
  root — the figures ``abcd usage session`` prints, by the same code;
- sessions are ordered newest first (by first turn time, then last capture, then
  id, so the order is total and pages never overlap); ``offset``/``limit`` cut one
  page of that order and ``total`` says how many there are in all;
- :func:`repositories` counts each indexed root's sessions and its latest capture,
  newest first;
- only the index is read — no record file is listed or opened — so the cost is a
  few grouped queries, whatever the records' sizes. The index is derived data: the
  caller brings it level first (the daemon's keeper, or ``sync`` in-process).

Synchronous (SQLite).
"""

from __future__ import annotations

import sqlite3

from .pricing import Pricing
from .usage import report
from .values import RepositorySummary, SessionPage, SessionSummary

__all__ = ["RepositorySummary", "SessionPage", "SessionSummary", "repositories", "session_page"]

_LIST = """
SELECT r.session_id, count(*), max(r.captured_at), coalesce(t.first_ns, 0), coalesce(t.last_ns, 0)
FROM records r LEFT JOIN (
    SELECT session_id, min(when_ns) AS first_ns, max(when_ns) AS last_ns FROM turns
    WHERE root = ?1 AND when_ns > 0 GROUP BY session_id) t ON t.session_id = r.session_id
WHERE r.root = ?1 GROUP BY r.session_id
ORDER BY coalesce(t.first_ns, 0) DESC, max(r.captured_at) DESC, r.session_id
"""


def session_page(conn: sqlite3.Connection, root: str, pricing: Pricing, *, offset: int = 0,
                 limit: int = 100) -> SessionPage:
    """Sessions ``offset`` to ``offset + limit`` of ``root``, newest first."""
    offset, limit = max(0, offset), max(1, limit)
    rows = conn.execute(_LIST, (root,)).fetchall()
    chosen = rows[offset:offset + limit]
    usage = {}
    if chosen:
        usage = {row.key: row for row in report(conn, "session", pricing, roots=(root,)).rows}
    return SessionPage(total=len(rows), offset=offset, pricing_as_of=pricing.as_of, sessions=[
        SessionSummary(sid, agents, first, last, captured, usage.get(sid))
        for sid, agents, captured, first, last in chosen])


def repositories(conn: sqlite3.Connection) -> list[RepositorySummary]:
    """Every root the index holds a record of, its latest capture first."""
    return [RepositorySummary(root, sessions, captured) for root, sessions, captured in conn.execute(
        "SELECT root, count(DISTINCT session_id), max(captured_at) FROM records GROUP BY root "
        "ORDER BY max(captured_at) DESC, root")]
