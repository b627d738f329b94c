"""``abcd search``: FTS5 over every indexed turn, ranked by BM25, with snippets.

Contracts:
- the query is FTS5 syntax (phrases ``"a b"``, prefixes ``tok*``, ``AND``/``OR``/
  ``NOT``); a query FTS5 rejects is searched as plain words instead (each quoted),
  never an error — a user typing ``foo(bar`` or ``"unclosed`` gets results;
- filters narrow by repository root, session, agent type (``main`` for main
  threads), role (``user``/``assistant``/``tool``), tool name and time;
- each hit names what ``abcd history reconstruct`` needs to jump there: session,
  thread (``main`` or the agent id) and its type, turn number and time, and a
  snippet with the matches between ``[`` and ``]``;
- ranking costs time per match, so a query that matches more than ``f.window``
  turns (under its filters) is ranked among its newest ``f.window`` matches: a word
  in half the corpus answers in milliseconds, and what it finds is recent;
- the hits are ranked first and only those returned get a snippet (FTS5's snippet
  depends on the turn's text and the query alone: the same one either way), all in
  one pass over the span of rowids the ranking read; a
  window of newest matches is read and scored in one pass, an unfiltered one without
  joining each candidate's turn row.
"""

from __future__ import annotations

import datetime as _dt
import re
import sqlite3

from .values import ROLES, Filters, Hit

__all__ = ["Filters", "Hit", "ROLES", "plain_words", "search"]


def plain_words(query: str) -> str:
    """``query`` as FTS5 plain words: every run of word characters, quoted."""
    words = re.findall(r"\w+", query)
    return " ".join('"' + w + '"' for w in words)


def search(conn: sqlite3.Connection, query: str, f: Filters = Filters()) -> list[Hit]:
    """The best ``f.limit`` turns matching ``query`` under ``f``, best first."""
    if f.role and f.role not in ROLES:
        raise ValueError(f"--role must be one of {', '.join(ROLES)}, not {f.role!r}")
    if not query.strip():
        return []
    try:
        return _run(conn, query, f)
    except sqlite3.OperationalError:
        words = plain_words(query)
        return _run(conn, words, f) if words else []


def _run(conn: sqlite3.Connection, match: str, f: Filters) -> list[Hit]:
    where, args = _where(match, f)
    limit = max(1, f.limit)
    # Ranked first, snippets after: a snippet re-reads and re-tokenises its turn's
    # text, and SQLite makes every output column of each candidate before it sorts
    # them, so a query ranked among 2,000 matches made 2,000 snippets to show 20.
    if 0 < f.window <= _WINDOW_IN_PYTHON:
        ranked = _rank_newest(conn, where, args, f.window, limit)
    else:
        if f.window > 0:  # the newest f.window matches: turn ids grow with capture time
            cutoff = conn.execute(
                "SELECT turn_text.rowid FROM turn_text JOIN turns t ON t.id = turn_text.rowid"
                f" WHERE {' AND '.join(where)} ORDER BY turn_text.rowid DESC LIMIT 1 OFFSET ?",
                [*args, f.window - 1]).fetchone()
            if cutoff is not None:
                where.append("turn_text.rowid >= ?")
                args.append(cutoff[0])
        ranked = conn.execute(
            "SELECT turn_text.rowid, bm25(turn_text) FROM turn_text JOIN turns t ON t.id = turn_text.rowid"
            f" WHERE {' AND '.join(where)} ORDER BY bm25(turn_text), t.when_ns LIMIT ?",
            [*args, limit]).fetchall()
    return _hits(conn, match, ranked)


#: A window up to this many matches is ranked by :func:`_rank_newest` (its turns are
#: looked up by one ``IN`` list, under SQLite's limit of bound values).
_WINDOW_IN_PYTHON = 10_000


def _rank_newest(conn: sqlite3.Connection, where: list[str], args: list, window: int,
                 limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` of the newest ``window`` matches, ordered by BM25 then the
    turn's time, in one pass newest first (FTS5 reads its rows in rowid order, no
    sort) that scores each of them: the set a cutoff query and a ranking query
    restricted to it would give, for half the reading. Under no filter the turn rows
    are looked up only for the best and any tied with the last (the time tie-break):
    looking up every candidate's cost more than ranking."""
    joined = len(where) > 1
    scored = conn.execute(
        "SELECT turn_text.rowid, bm25(turn_text)" + (", t.when_ns FROM turn_text JOIN turns t"
                                                     " ON t.id = turn_text.rowid" if joined else " FROM turn_text")
        + f" WHERE {' AND '.join(where)} ORDER BY turn_text.rowid DESC LIMIT ?", [*args, window]).fetchall()
    if joined:
        scored.sort(key=lambda row: (row[1], row[2]))
        return [(rowid, score) for rowid, score, _when_ns in scored[:limit]]
    if not scored:
        return []
    scored.sort(key=lambda row: row[1])
    last = scored[min(limit, len(scored)) - 1][1]
    chosen = [row for row in scored if row[1] <= last]  # the best limit, with any tied at the last
    when = dict(conn.execute(f"SELECT id, when_ns FROM turns WHERE id IN ({','.join('?' * len(chosen))})",
                             [rowid for rowid, _ in chosen]).fetchall())
    chosen.sort(key=lambda row: (row[1], when.get(row[0], 0)))
    return chosen[:limit]


#: The ranked turns with their snippets, in one pass of FTS5 over the rowids from the
#: lowest ranked to the highest (``rowid + 0 IN``: a filter, not a rowid lookup per
#: turn — each lookup seeks every term in every segment again, and twenty of them cost
#: several times the pass). The ranking read every match in that span already, so the
#: pass never reads more than it did. What FTS5's snippet() picks depends on the turn's
#: text and the query alone, not on the other matches: the same snippet either way.
_HITS_SQL = ("SELECT turn_text.rowid, t.session_id, t.root, t.thread, t.agent_type, t.turn, t.role, t.when_ns,"
             " snippet(turn_text, 0, '[', ']', '…', 16)"
             " FROM turn_text CROSS JOIN turns t ON t.id = turn_text.rowid"
             " WHERE turn_text MATCH ? AND turn_text.rowid BETWEEN ? AND ? AND turn_text.rowid + 0 IN ({})")


def _hits(conn: sqlite3.Connection, match: str, ranked: list[tuple[int, float]]) -> list[Hit]:
    """The hits of the ``ranked`` turns, in their order (a turn a sync dropped since it
    was ranked is left out)."""
    if not ranked:
        return []
    ids = [rowid for rowid, _score in ranked]
    rows = {row[0]: row[1:] for row in conn.execute(
        _HITS_SQL.format(",".join("?" * len(ids))), (match, min(ids), max(ids), *ids))}
    hits = []
    for rowid, score in ranked:
        row = rows.get(rowid)
        if row is not None:
            s, root, thread, atype, turn, role, when, snip = row
            hits.append(Hit(s, root, thread or "main", atype or ("main" if not thread else ""), turn, role,
                            _when(when), snip.replace("\n", " "), round(score, 3)))
    return hits


def _where(match: str, f: Filters) -> tuple[list[str], list]:
    """The WHERE terms (the MATCH first) and their arguments of ``f``."""
    where, args = ["turn_text MATCH ?"], [match]
    if f.roots:
        where.append(f"t.root IN ({','.join('?' * len(f.roots))})")
        args += list(f.roots)
    if f.session:
        where.append("t.session_id LIKE ? ESCAPE '\\'")
        args.append(f.session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    if f.agent_type == "main":
        where.append("t.thread = ''")
    elif f.agent_type:
        where.append("t.agent_type = ?")
        args.append(f.agent_type)
    if f.role:
        where.append("t.role = ?")
        args.append(f.role)
    if f.tool:
        where.append("(' ' || t.tools || ' ') LIKE ?")
        args.append(f"% {f.tool} %")
    if f.since_ns:
        where.append("t.when_ns >= ?")
        args.append(f.since_ns)
    if f.until_ns:
        where.append("t.when_ns < ?")
        args.append(f.until_ns)
    return where, args


def _when(ns: int) -> str:
    if not ns:
        return ""
    return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
