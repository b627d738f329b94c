"""``abcd usage``: token and cost roll-ups over the index's response rows.

Contracts:
- the rows are the responses telemetry counts (``derive``: one per response id per
  session), so a session's four token totals here equal its telemetry file's;
- a report groups by ``daily`` / ``weekly`` (ISO week) / ``monthly`` (UTC), or by
  ``session``, ``repo``, ``model``, ``agent-type`` (``main`` for main threads: each
  session's usage split between its main thread and each sub-agent type) or
  ``agent`` (the thread: ``main`` or the agent id — what the viewer's bars show);
- ``session`` narrows any report to one session id (exact, not a prefix);
- cost is priced per response (``pricing``; long-context tiers apply per
  response); tokens of a model the table does not know are counted, left unpriced,
  and named in ``unpriced`` — a row's cost is then a lower bound, and says so;
- ``breakdown`` adds per-model sub-rows inside each row.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3

from .pricing import Pricing
from .schema import DAY_SQL, LONG_SQL
from .values import REPORTS, Report, Row

__all__ = ["REPORTS", "Report", "Row", "report"]


def _regroup(kind: str, day: str) -> str:
    """A ``YYYY-MM-DD`` day as its ISO week or its month."""
    if not day:
        return ""
    if kind == "monthly":
        return day[:7]
    year, week, _ = _dt.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def report(conn: sqlite3.Connection, kind: str, pricing: Pricing, *, roots: tuple[str, ...] = (),
           since_ns: int = 0, until_ns: int = 0, session: str = "") -> Report:
    """The ``kind`` report over the responses under the filters (rows sorted by key)."""
    if kind not in REPORTS:
        raise ValueError(f"unknown report {kind!r}; one of {', '.join(REPORTS)}")
    where, args = [], []
    if roots:
        where.append(f"root IN ({','.join('?' * len(roots))})")
        args += list(roots)
    if session:
        where.append("session_id = ?")
        args.append(session)
    if since_ns:
        where.append("when_ns >= ?")
        args.append(since_ns)
    if until_ns:
        where.append("when_ns < ?")
        args.append(until_ns)
    # Aggregated in SQL by (group, model, whether the prompt is over the long-context
    # threshold): cost is linear in each figure, so pricing the sums is exact. Without
    # a time range the per-record sums answer (the same figures, far fewer rows).
    timed = bool(since_ns or until_ns)
    day = DAY_SQL if timed else "day"
    group = {"daily": day, "weekly": day, "monthly": day, "session": "session_id", "repo": "root",
             "model": "model", "agent-type": "CASE WHEN thread = '' THEN 'main' ELSE agent_type END",
             "agent": "CASE WHEN thread = '' THEN 'main' ELSE thread END"}[kind]
    if timed:
        sql = (f"SELECT {group}, model, {LONG_SQL}, sum(input), sum(output), sum(cache_creation),"
               " sum(cache_read), count(*) FROM responses")
    else:
        sql = (f"SELECT {group}, model, long, sum(input), sum(output), sum(cache_creation), sum(cache_read),"
               " sum(responses) FROM usage_sums")
    sql += (f" WHERE {' AND '.join(where)}" if where else "") + " GROUP BY 1, 2, 3"
    rows: dict[str, Row] = {}
    unpriced: set[str] = set()
    for key, model, long, i, o, cw, cr, n in conn.execute(sql, args):
        if kind in ("weekly", "monthly"):
            key = _regroup(kind, key)
        elif kind == "agent-type" and not key:
            key = "(type unknown)"
        elif kind == "model" and not key:
            key = "(unknown model)"
        cost = pricing.cost_of_sums(model, long, i, o, cw, cr)
        name = model or "(unknown model)"
        if cost is None:
            unpriced.add(name)
        row = rows.setdefault(key or "(no time)", Row(key or "(no time)"))
        row.add(i, o, cw, cr, cost, n)
        row.models.setdefault(name, Row(name)).add(i, o, cw, cr, cost, n)
    return Report(kind, [rows[k] for k in sorted(rows)], sorted(unpriced), pricing.as_of)
