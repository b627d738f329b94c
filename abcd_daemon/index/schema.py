"""The index's tables, defined once (``db`` creates them, ``query`` and ``usage`` read them).

- ``records``: one row per record file indexed, with the file's identity when it was
  read (inode, size, mtime: what ``sync`` compares with the disk);
- ``turns`` + ``turn_text`` (FTS5, BM25): one row per turn with its redacted text;
  turn ids grow with the records' capture time (``sync`` indexes oldest first), so
  "newest" is "highest id";
- ``responses``: one row per API response, keyed ``(session_id, response_id)`` — the
  responses telemetry counts, each once;
- ``copies``: one row per response an ``agent_progress`` line copies, keyed
  ``(session_id, agent_id, response_id)``, with the host record; read only for agents
  of which no record is stored in the session (``records_agent``), apart from the rest;
- ``usage_sums``: the responses of each record summed by (UTC day, model, whether the
  prompt is over the long-context threshold), written with them: ``abcd usage``
  without a time range adds up a few rows per record instead of every response;
  ``usage_sums_by_day`` covers the daily, weekly and monthly reports (read in its
  order, nothing to sort: a third of the time over 2,000 sessions).
"""

from __future__ import annotations

import datetime as _dt
import functools

from .pricing import LONG_PROMPT

SCHEMA_VERSION = 4

#: The UTC day of a response, in SQL ("" when it has no time).
DAY_SQL = "CASE WHEN when_ns = 0 THEN '' ELSE strftime('%Y-%m-%d', when_ns / 1000000000, 'unixepoch') END"
_EPOCH = _dt.datetime(1970, 1, 1)


@functools.lru_cache(maxsize=8192)
def _day_name(days: int) -> str:
    return (_EPOCH + _dt.timedelta(days=days)).date().isoformat()


def utc_day(when_ns: int) -> str:
    """:data:`DAY_SQL` in Python, to the character (SQLite divides toward zero)."""
    if when_ns == 0:
        return ""
    seconds = when_ns // 1_000_000_000 if when_ns >= 0 else -(-when_ns // 1_000_000_000)
    return _day_name(seconds // 86_400)


#: Whether a response's prompt is priced at a long-context tier, in SQL.
LONG_SQL = f"(input + cache_creation + cache_read) > {LONG_PROMPT}"

#: The indexes no write of a new record reads (``rows.delete`` and the reports read
#: them): a build into an empty index creates them after its rows (:func:`.rows.bulk`),
#: sorted once instead of kept up row by row. ``responses_record`` is not among them:
#: a record that shares responses with another sums its own through it.
DEFERRED_INDEXES = {
    "records_agent": "records(session_id, agent_id)",
    "turns_record": "turns(record)",
    "copies_record": "copies(record)",
    "usage_sums_record": "usage_sums(record)",
    "usage_sums_by_day": "usage_sums(day, model, long, root, input, output, cache_creation, cache_read, responses)",
}

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    name TEXT PRIMARY KEY, root TEXT NOT NULL, session_id TEXT NOT NULL, agent_id TEXT NOT NULL,
    agent_type TEXT NOT NULL, captured_at TEXT NOT NULL, source_sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
    ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY, record TEXT NOT NULL, root TEXT NOT NULL, session_id TEXT NOT NULL,
    thread TEXT NOT NULL, agent_type TEXT NOT NULL, turn INTEGER NOT NULL, role TEXT NOT NULL,
    tools TEXT NOT NULL, when_ns INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS turn_text USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS responses (
    session_id TEXT NOT NULL, response_id TEXT NOT NULL, record TEXT NOT NULL, root TEXT NOT NULL,
    thread TEXT NOT NULL, agent_type TEXT NOT NULL, model TEXT NOT NULL, when_ns INTEGER NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_creation INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, PRIMARY KEY (session_id, response_id));
CREATE INDEX IF NOT EXISTS responses_record ON responses(record);
CREATE TABLE IF NOT EXISTS copies (
    session_id TEXT NOT NULL, agent_id TEXT NOT NULL, response_id TEXT NOT NULL, record TEXT NOT NULL,
    root TEXT NOT NULL, agent_type TEXT NOT NULL, model TEXT NOT NULL, when_ns INTEGER NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_creation INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, PRIMARY KEY (session_id, agent_id, response_id));
CREATE TABLE IF NOT EXISTS usage_sums (
    record TEXT NOT NULL, root TEXT NOT NULL, session_id TEXT NOT NULL, thread TEXT NOT NULL,
    agent_type TEXT NOT NULL, day TEXT NOT NULL, model TEXT NOT NULL, long INTEGER NOT NULL,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_creation INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, responses INTEGER NOT NULL);
""" + "".join(f"CREATE INDEX IF NOT EXISTS {name} ON {on};\n" for name, on in DEFERRED_INDEXES.items())

#: Sums the responses a record's rows just added (the ones it did not share with an
#: earlier record of its session) into ``usage_sums``.
SUM_RECORD = (f"INSERT INTO usage_sums SELECT record, root, session_id, thread, agent_type, {DAY_SQL}, model,"
              f" {LONG_SQL}, sum(input), sum(output), sum(cache_creation), sum(cache_read), count(*)"
              " FROM responses WHERE record = ? GROUP BY 6, 7, 8")

#: The copied responses of agents with no stored record in their session (usage reports
#: them apart: a copy is never part of the totals).
COPY_ONLY = ("copies c WHERE NOT EXISTS (SELECT 1 FROM records r"
             " WHERE r.session_id = c.session_id AND r.agent_id = c.agent_id)")

TABLES = ("turn_text", "turns", "responses", "copies", "usage_sums", "records")
