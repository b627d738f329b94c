"""One record's rows written into the index, and the settings of a bulk sync.

Contracts:
- :func:`write_rows` replaces a record's rows inside the caller's transaction (it
  neither begins nor commits one): :mod:`.db` groups records into batches;
- a record's turn ids are numbered by the caller from :func:`next_id`, so they grow
  with the order records are written in (oldest first: "newest" is "highest id");
- a response already held for the session (a copy in another thread) is kept where it
  is; the record's ``usage_sums`` then come from the rows it did add;
- :func:`bulk` changes only how fast SQLite, FTS5 and Python's collector work, never
  what is stored, and puts every setting back on the way out (into an empty index it
  also creates the lookup indexes after the rows instead of before).
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3

from ..gcpause import paused
from .derive import Derived
from .pricing import LONG_PROMPT
from .schema import DEFERRED_INDEXES, SUM_RECORD, utc_day


def delete(conn: sqlite3.Connection, name: str) -> None:
    """Drop every row of the record file ``name`` (inside the caller's transaction)."""
    conn.execute("DELETE FROM turn_text WHERE rowid IN (SELECT id FROM turns WHERE record = ?)", (name,))
    conn.execute("DELETE FROM turns WHERE record = ?", (name,))
    conn.execute("DELETE FROM responses WHERE record = ?", (name,))
    conn.execute("DELETE FROM copies WHERE record = ?", (name,))
    conn.execute("DELETE FROM usage_sums WHERE record = ?", (name,))
    conn.execute("DELETE FROM records WHERE name = ?", (name,))


#: Turn rows written per ``executemany``.
_ROW_BATCH = 2000


def first_free_id(conn: sqlite3.Connection) -> int:
    """The first free turn id (inside a write transaction: no other writer moves it)."""
    return conn.execute("SELECT coalesce(max(id), 0) + 1 FROM turns").fetchone()[0]


def write_rows(conn: sqlite3.Connection, root: str, d: Derived, next_id: int, ident: tuple[int, int, int],
               fresh: bool = False) -> int:
    """Replace the rows of ``d.record`` (read from a file of identity ``ident``) inside
    the caller's transaction, numbering its turns from ``next_id``; returns the next
    free id. ``fresh``: the record has no rows yet (nothing to delete)."""
    r = d.record
    thread = r.agent_id or ""
    if not fresh:
        delete(conn, r.name)
    conn.execute("INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (r.name, root, r.session_id, thread, r.agent_type, r.captured_at, r.source_sha256, r.body_bytes,
                  *ident))
    turns = iter(d.turns)
    while True:  # in batches: the turns of a body read lean are made as they are written
        batch = list(itertools.islice(turns, _ROW_BATCH))
        if not batch:
            break
        ids = range(next_id, next_id + len(batch))
        conn.executemany("INSERT INTO turns VALUES (?,?,?,?,?,?,?,?,?,?)",
                         [(i, r.name, root, r.session_id, thread, r.agent_type, t.turn, t.role, t.tools, t.when_ns)
                          for i, t in zip(ids, batch)])
        conn.executemany("INSERT INTO turn_text (rowid, text) VALUES (?, ?)", [(i, t.text) for i, t in zip(ids, batch)])
        next_id += len(batch)
    if d.copies:
        conn.executemany("INSERT OR IGNORE INTO copies VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                         [(r.session_id, c.agent_id, x.response_id, r.name, root, c.agent_type, x.model, x.when_ns,
                           x.input, x.output, x.cache_creation, x.cache_read) for c in d.copies for x in (c.response,)])
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO responses VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [(r.session_id, x.response_id, r.name, root, thread, r.agent_type, x.model, x.when_ns, x.input,
          x.output, x.cache_creation, x.cache_read) for x in d.responses])
    if conn.total_changes - before == len(d.responses):  # every response is this record's: sum them here
        sums: dict[tuple[str, str, bool], list[int]] = {}
        for x in d.responses:
            s = sums.setdefault((utc_day(x.when_ns), x.model, x.input + x.cache_creation + x.cache_read > LONG_PROMPT),
                                [0, 0, 0, 0, 0])
            s[0] += x.input
            s[1] += x.output
            s[2] += x.cache_creation
            s[3] += x.cache_read
            s[4] += 1
        conn.executemany("INSERT INTO usage_sums VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         [(r.name, root, r.session_id, thread, r.agent_type, *k, *v) for k, v in sums.items()])
    else:  # some were already another record's (a copy in the same session): the rows decide
        conn.execute(SUM_RECORD, (r.name,))
    return next_id


@contextlib.contextmanager
def bulk(conn: sqlite3.Connection, on: bool, batch_bytes: int, empty: bool = False):
    """For a large sync: FTS5 keeps a whole batch's terms in memory (one segment per
    commit, not one per MiB of text: far less merging), a 128 MiB page cache (the
    merges go through it), a WAL checkpointed every 64 MiB instead of every 4 MiB (each
    checkpoint fsyncs), and Python's cyclic garbage collector paused (the parser's
    objects are freed by reference counting; the collector's passes over them were an
    eighth of deriving: :mod:`.db` runs a young collection after each
    batch instead). Put back afterwards (the next commit then checkpoints the WAL,
    which ``journal_size_limit`` shrinks). FTS5's ``automerge`` stays 4: merging 16
    segments at a time saved little here and left levels that the next small
    updates merged, one of them taking over a second.

    ``empty`` (no record indexed yet: a first build or a rebuild): the indexes of
    :data:`~.schema.DEFERRED_INDEXES`, which writing new records never reads, are
    dropped first and created once the rows are in (a sort of each table instead of a
    B-tree insert per row: at 1.27 GB about a second of the build's CPU, and a smaller
    file). Each drop and create commits on its own; a build killed in between leaves
    them to the next :func:`.db.connect`, whose schema script creates any that is
    missing."""
    if not on:
        yield
        return
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute("PRAGMA cache_size = -131072")
    conn.execute(f"PRAGMA wal_autocheckpoint = {(64 << 20) // _page_size(conn)}")
    _fts_set(conn, hashsize=2 * batch_bytes)
    if empty:
        for name in DEFERRED_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
    try:
        with paused():  # the daemon's one collector pause, shared with redaction and reconstruct
            yield
    finally:
        if empty:  # made under the bulk's page cache: it sorts in it
            for name, on_columns in DEFERRED_INDEXES.items():
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on_columns}")
        _fts_set(conn, hashsize=1 << 20)
        conn.execute(f"PRAGMA cache_size = {int(cache)}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {(4 << 20) // _page_size(conn)}")
        conn.execute("PRAGMA shrink_memory")


def _fts_set(conn: sqlite3.Connection, **settings: int) -> None:
    """Set FTS5 configuration options of ``turn_text`` (kept in the database)."""
    for key, value in settings.items():
        conn.execute("INSERT INTO turn_text(turn_text, rank) VALUES (?, ?)", (key, value))


def _page_size(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA page_size").fetchone()[0])
