"""The index database: ``ABCD_HOME/index.sqlite3`` (0600, WAL), derived from records.

Contracts:
- every row belongs to one record file (``records.name``) of one repository lane;
  :func:`sync` replaces a record's rows inside one transaction (a batch of several
  records), :func:`remove` drops them — so a crash leaves each record's old rows or
  its new ones, never a part;
- :func:`sync` makes the index equal the records on disk (adds what is missing or
  changed, by the file's identity — inode, size, mtime: a record is never modified
  in place — reading only those files' headers; drops rows of records that are gone): run
  at start it repairs whatever a crash between a record write and its rows left,
  and :func:`rebuild` is ``sync`` from an empty database; :func:`update` does the
  same for named record files only (the drain's update: no directory listing);
- responses are keyed by ``(session_id, response_id)``: a response copied into
  another thread of the same session is counted once, as telemetry counts it;
- the file is created owner-only inside the verified abcd home; a database that
  does not open or has another schema version is rebuilt, never trusted.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable

from .. import safedir
from ..errors import ReadRefused
from ..limits import STREAM_ABOVE
from ..store.body import body_of
from ..store.lane import Lane, list_lanes
from ..store.record import RecordFormatError
from ..store.records import cached_header, file_identity, read_body, scan_files
from .derive import derive, derive_lean
from .rows import bulk, delete, first_free_id, write_rows
from .schema import DDL, SCHEMA_VERSION, TABLES

#: Record bytes applied per transaction by :func:`sync`.
BATCH_BYTES = 16 << 20
#: A sync of more record bytes than this runs with the bulk settings of :func:`_bulk`.
BULK_BYTES = 16 << 20
INDEX_NAME = "index.sqlite3"

def index_path(home) -> str:
    return os.path.join(str(home.root), INDEX_NAME)


def connect(home) -> sqlite3.Connection:
    """The index of ``home``, created owner-only if absent; rebuilt empty when it does
    not open or carries another schema version (the caller then syncs)."""
    path = index_path(home)
    os.close(safedir.open_chain(str(home.root)))  # ours, not writable by others, no symlink
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise PermissionError(f"{path} is not owned by you; remove it and run `abcd index rebuild`")
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    try:
        conn = _open(path)
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.DatabaseError:
        conn, version = None, None
    if version is None or version[0] != str(SCHEMA_VERSION):
        if conn is not None:
            conn.close()
        _remove_files(path)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
        conn = _open(path)
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    return conn


def open_reader(home) -> sqlite3.Connection | None:
    """A read-only connection to the existing index of ``home`` (it takes no lock a
    writer holds, so it opens during a long sync), or None when there is no index of
    this schema yet (the caller then uses :func:`connect`)."""
    path = index_path(home)
    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error):
        return None
    try:
        conn.execute("PRAGMA query_only = 1")
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if version is not None and version[0] == str(SCHEMA_VERSION):
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def _remove_files(path: str) -> None:
    """Remove the database at ``path`` with its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


def _open(path: str) -> sqlite3.Connection:
    """A connection with the schema in place. Raises sqlite3.DatabaseError when the
    file is not a database."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        # 16 KiB pages (a new file only; WAL fixes it from the first write on): FTS5's
        # segments are large blobs, and the build runs ~15% faster than on 4 KiB pages
        conn.execute("PRAGMA page_size = 16384")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA journal_size_limit = 8388608")  # the WAL shrinks back after a bulk sync
        conn.executescript(DDL)
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def remove(conn: sqlite3.Connection, name: str) -> None:
    """Drop every row of the record file ``name`` (a forgotten or superseded record)."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        delete(conn, name)


def sync(conn: sqlite3.Connection, home, progress: Callable[[int, int], None] | None = None,
         lanes: Iterable[Lane] | None = None) -> tuple[int, int]:
    """Make the index of ``lanes`` (default: every lane, and rows of lanes that are
    gone are dropped) equal their records on disk; ``(indexed, dropped)``. A record
    that cannot be read is left out (its rows dropped) and picked up once readable; a
    record file whose name is indexed for another lane is left to that lane."""
    lanes = None if lanes is None else list(lanes)
    scope = None if lanes is None else {lane.root_sha for lane in lanes}
    lanes = list_lanes(home) if lanes is None else lanes
    rows = conn.execute("SELECT name, root, ino, size, mtime_ns FROM records").fetchall()
    owner = {row[0]: row[1] for row in rows}
    have = {name: (ino, size, mtime) for name, root, ino, size, mtime in rows if scope is None or root in scope}
    todo = []
    seen = set()
    for lane in lanes:
        for name, path, st in scan_files(lane):
            if owner.get(name, lane.root_sha) != lane.root_sha:
                continue  # a file of this name is indexed for another lane: it stays that lane's
            if _changed(lane, path, st, have.get(name), todo):
                seen.add(name)
    gone = [n for n in have if n not in seen]
    return _apply(conn, todo, gone, set(owner), progress)


def update(conn: sqlite3.Connection, lane: Lane, names: Iterable[str],
           progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
    """Bring the rows of the record files ``names`` of ``lane`` level with the disk,
    as :func:`sync` would, looking at those files only (a ``stat`` each; the records
    directory is not listed): the drain's update after a pass, which knows the files
    it stored and superseded. A file that is gone or unreadable has its rows dropped;
    a name indexed for another lane is left to it; ``(indexed, dropped)``. Whatever
    else changed on disk is :func:`sync`'s (at start, on a read of a changed lane)."""
    names = sorted({n for n in names if n.endswith(".md") and not n.startswith(".") and "/" not in n})
    rows = []
    for at in range(0, len(names), 500):
        part = names[at:at + 500]
        rows += conn.execute("SELECT name, root, ino, size, mtime_ns FROM records WHERE name IN "
                             f"({','.join('?' * len(part))})", part).fetchall()
    owner = {row[0]: row[1] for row in rows}
    have = {name: (ino, size, mtime) for name, root, ino, size, mtime in rows if root == lane.root_sha}
    todo, gone = [], []
    for name in names:
        if owner.get(name, lane.root_sha) != lane.root_sha:
            continue
        path = os.path.join(lane.records, name)
        try:
            st = os.stat(path, follow_symlinks=False)
        except (OSError, ValueError):  # gone (or a name no file can have)
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or not _changed(lane, path, st, have.get(name), todo):
            if name in have:
                gone.append(name)
    return _apply(conn, todo, gone, set(owner), progress)


def _changed(lane: Lane, path: str, st: os.stat_result, had, todo: list) -> bool:
    """Queue the record file at ``path`` on ``todo`` unless its identity is ``had``
    (the file its rows were derived from); False when its header cannot be read."""
    ident = file_identity(st)
    if had == ident:  # unchanged
        return True
    try:
        rec = cached_header(path, st)
    except (OSError, ReadRefused, RecordFormatError):  # unreadable: its rows go
        return False
    todo.append((lane, rec, ident))
    return True


def _apply(conn: sqlite3.Connection, todo: list, gone: list[str], indexed: set[str],
           progress) -> tuple[int, int]:
    """Drop the rows of ``gone``, then write ``todo`` oldest first (ids grow with time)."""
    todo.sort(key=lambda item: (item[1].captured_ns, item[1].name))
    for name in gone:
        remove(conn, name)
    if not todo:
        return 0, len(gone)
    # Records are applied in batches of about BATCH_BYTES per transaction (a commit
    # per record costs more than deriving it); a crash loses at most the open batch,
    # whole, and the next sync redoes it.
    with bulk(conn, sum(rec.body_bytes for _, rec, _ident in todo) > BULK_BYTES, BATCH_BYTES, empty=not indexed):
        _apply_batches(conn, todo, indexed, progress)
    return len(todo), len(gone)


#: What writing one record's rows can raise that is that record's alone (a name
#: another lane's record holds, a value SQLite cannot bind).
_ROW_ERRORS = (sqlite3.IntegrityError, ValueError, OverflowError)


class _Unwritable(Exception):
    """A record of the batch could not be written; the batch is rolled back."""


def _apply_batches(conn: sqlite3.Connection, todo, indexed: set[str], progress) -> None:
    """Apply ``todo`` in transactions of about :data:`BATCH_BYTES` of records each.

    A batch is written without savepoints: a savepoint makes FTS5 flush the terms it
    holds in memory into a new segment, so one per record would write a segment per
    record and merge them over and over (the build ran at half the speed). A record
    whose rows cannot be written spoils its batch: the batch is rolled back and
    written again a record at a time, each under a savepoint, and that record alone
    is left out (it keeps the rows it had). ``progress(done, total)`` is told after
    each record, the last of a batch once the batch is committed."""
    reported = 0

    def tell(done: int) -> None:
        nonlocal reported
        if progress is not None and done > reported:
            reported = done
            progress(done, len(todo))

    start = 0
    while start < len(todo):
        end, size = start, 0
        while end < len(todo) and size < BATCH_BYTES:
            size += todo[end][1].body_bytes
            end += 1
        try:
            _write_batch(conn, todo[start:end], indexed, lambda i: tell(start + i), careful=False)
        except _Unwritable:
            _write_batch(conn, todo[start:end], indexed, lambda i: tell(start + i), careful=True)
        tell(end)
        start = end


def _write_batch(conn: sqlite3.Connection, batch, indexed: set[str], tell, *, careful: bool) -> None:
    """Write ``batch`` in one transaction (see :func:`_apply_batches`); ``tell(n)``
    after its n-th record, except the last. Raises _Unwritable (rolled back) when not
    ``careful`` and a record cannot be written."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        next_id = first_free_id(conn)
        for n, (lane, rec, ident) in enumerate(batch, 1):
            lean = rec.body_bytes > STREAM_ABOVE  # read lean: rows made as they are written
            try:
                d = derive_lean(rec, body_of(lane, rec)) if lean else derive(rec, read_body(lane, rec))
            except Exception:  # unreadable now: left out, indexed by a later sync
                continue
            if careful:
                conn.execute("SAVEPOINT one")
            try:
                next_id = write_rows(conn, lane.root_sha, d, next_id, ident, fresh=rec.name not in indexed)
            except Exception as exc:
                # this record's rows only — or a body read lean that could not be read
                # again while its rows were made (left out, as an unreadable one)
                if not (isinstance(exc, _ROW_ERRORS) or lean):
                    raise
                if not careful:
                    raise _Unwritable(rec.name) from None
                conn.execute("ROLLBACK TO one")  # this record's rows only; the others go on
            if careful:
                conn.execute("RELEASE one")
            del d
            if n < len(batch):
                tell(n)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if not gc.isenabled():  # a bulk sync (rows.bulk): the batch's cyclic garbage, if any
        gc.collect(1)


def reset(conn: sqlite3.Connection) -> None:
    """Empty the database in place (its tables dropped and created again, the file
    compacted): connections other threads hold stay valid."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        for table in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute("VACUUM")
    conn.executescript(DDL)


def rebuild(home, progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
    """Empty the index (in place: :func:`reset`) and derive it again from every record."""
    conn = connect(home)
    try:
        reset(conn)
        return sync(conn, home, progress)
    finally:
        conn.close()
