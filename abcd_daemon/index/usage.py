"""``abcd usage``: token and cost roll-ups over the index's response rows.

Contracts:
- the rows are the responses telemetry counts (``derive``: one per response id per
  session), so a session's four token totals here equal its telemetry file's;
- a report groups by ``daily`` / ``weekly`` (ISO week) / ``monthly`` (UTC), or by
  ``session``, ``repo``, ``model``, ``agent-type`` (``main`` for main threads: each
  session's usage split between its main thread and each sub-agent type);
- cost is priced per response (``pricing``; long-context tiers apply per
  response); tokens of a model the table does not know are counted, left unpriced,
  and named in ``unpriced`` — a row's cost is then a lower bound, and says so;
- ``breakdown`` adds per-model sub-rows inside each row.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import sqlite3

from .pricing import Pricing

REPORTS = ("daily", "weekly", "monthly", "session", "repo", "model", "agent-type")


@dataclasses.dataclass
class Row:
    key: str
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    responses: int = 0
    cost_usd: float = 0.0
    unpriced_tokens: int = 0
    models: dict[str, "Row"] = dataclasses.field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_creation + self.cache_read

    def add(self, i: int, o: int, cw: int, cr: int, cost: float | None) -> None:
        self.input += i
        self.output += o
        self.cache_creation += cw
        self.cache_read += cr
        self.responses += 1
        if cost is None:
            self.unpriced_tokens += i + o + cw + cr
        else:
            self.cost_usd += cost

    def as_json(self, breakdown: bool) -> dict:
        out = {"key": self.key, "input": self.input, "output": self.output, "cache_creation": self.cache_creation,
               "cache_read": self.cache_read, "total": self.total, "responses": self.responses,
               "cost_usd": round(self.cost_usd, 6), "unpriced_tokens": self.unpriced_tokens}
        if breakdown:
            out["models"] = [m.as_json(False) for m in sorted(self.models.values(), key=lambda r: r.key)]
        return out


@dataclasses.dataclass
class Report:
    kind: str
    rows: list[Row]
    unpriced: list[str]
    pricing_as_of: str


def _bucket(kind: str, when_ns: int) -> str:
    if not when_ns:
        return "(no time)"
    d = _dt.datetime.fromtimestamp(when_ns / 1e9, _dt.timezone.utc)
    if kind == "daily":
        return d.strftime("%Y-%m-%d")
    if kind == "monthly":
        return d.strftime("%Y-%m")
    year, week, _ = d.isocalendar()
    return f"{year}-W{week:02d}"


def report(conn: sqlite3.Connection, kind: str, pricing: Pricing, *, roots: tuple[str, ...] = (),
           since_ns: int = 0, until_ns: int = 0) -> Report:
    """The ``kind`` report over the responses under the filters (rows sorted by key)."""
    if kind not in REPORTS:
        raise ValueError(f"unknown report {kind!r}; one of {', '.join(REPORTS)}")
    where, args = [], []
    if roots:
        where.append(f"root IN ({','.join('?' * len(roots))})")
        args += list(roots)
    if since_ns:
        where.append("when_ns >= ?")
        args.append(since_ns)
    if until_ns:
        where.append("when_ns < ?")
        args.append(until_ns)
    sql = ("SELECT session_id, root, thread, agent_type, model, when_ns, input, output, cache_creation, cache_read"
           " FROM responses" + (f" WHERE {' AND '.join(where)}" if where else ""))
    rows: dict[str, Row] = {}
    unpriced: set[str] = set()
    for session, root, thread, atype, model, when, i, o, cw, cr in conn.execute(sql, args):
        if kind in ("daily", "weekly", "monthly"):
            key = _bucket(kind, when)
        elif kind == "session":
            key = session
        elif kind == "repo":
            key = root
        elif kind == "model":
            key = model or "(unknown model)"
        else:
            key = "main" if not thread else (atype or "(type unknown)")
        cost = pricing.cost(model, i, o, cw, cr)
        if cost is None:
            unpriced.add(model or "(unknown model)")
        row = rows.setdefault(key, Row(key))
        row.add(i, o, cw, cr, cost)
        sub = row.models.setdefault(model or "(unknown model)", Row(model or "(unknown model)"))
        sub.add(i, o, cw, cr, cost)
    return Report(kind, [rows[k] for k in sorted(rows)], sorted(unpriced), pricing.as_of)
