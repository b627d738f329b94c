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
- ``breakdown`` adds per-model sub-rows inside each row;
- ``apart``: the usage known only from ``agent_progress`` copies of agents no record
  of their session holds (reconstruct's "spawned, transcript not stored"), grouped
  and priced as the rows are (by the type the spawning call names) and never part
  of them; an agent whose record is stored has its copies left out (its own
  responses are in the rows). The two never share a response.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3

from .pricing import Pricing
from .schema import COPY_ONLY, DAY_SQL, LONG_SQL
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
    """The ``kind`` report over the responses under the filters (rows sorted by key),
    with the copy-only ``agent_progress`` usage apart, grouped the same way."""
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
    group = _group(kind, DAY_SQL if timed else "day", "CASE WHEN thread = '' THEN 'main' ELSE agent_type END",
                   "CASE WHEN thread = '' THEN 'main' ELSE thread END")
    if timed:
        sql = (f"SELECT {group}, model, {LONG_SQL}, sum(input), sum(output), sum(cache_creation),"
               " sum(cache_read), count(*) FROM responses")
    else:
        sql = (f"SELECT {group}, model, long, sum(input), sum(output), sum(cache_creation), sum(cache_read),"
               " sum(responses) FROM usage_sums")
    sql += (f" WHERE {' AND '.join(where)}" if where else "") + " GROUP BY 1, 2, 3"
    unpriced: set[str] = set()
    rows = _rows(kind, conn.execute(sql, args), pricing, unpriced)
    sql = (f"SELECT {_group(kind, DAY_SQL, 'agent_type', 'agent_id')}, model, {LONG_SQL}, sum(input), sum(output),"
           f" sum(cache_creation), sum(cache_read), count(*) FROM {COPY_ONLY}"
           + "".join(f" AND {w}" for w in where) + " GROUP BY 1, 2, 3")
    apart = _rows(kind, conn.execute(sql, args), pricing, unpriced)
    return Report(kind, rows, sorted(unpriced), pricing.as_of, apart=apart)


def _group(kind: str, day: str, agent_type: str, agent: str) -> str:
    """What the ``kind`` report groups by, in SQL (daily, weekly and monthly by ``day``,
    regrouped after; ``agent_type`` and ``agent`` as the table at hand spells them)."""
    return {"session": "session_id", "repo": "root", "model": "model", "agent-type": agent_type,
            "agent": agent}.get(kind, day)


def _rows(kind: str, sums, pricing: Pricing, unpriced: set[str]) -> list[Row]:
    """Report rows from ``(key, model, long, input, output, cache write, cache read,
    responses)`` sums, priced; unpriced models are added to ``unpriced``."""
    rows: dict[str, Row] = {}
    for key, model, long, i, o, cw, cr, n in sums:
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
    return [rows[k] for k in sorted(rows)]
