"""Reading the corpus: list, read and per-session listing of records.

Every read is guarded; a record that is unreadable or does not parse (a symlinked or
FIFO leaf, a foreign fence) is skipped by listings and never crashes one. Parsed headers
are cached per file identity (inode, size, mtime): a long-lived daemon lists a lane of
thousands of records with one ``stat`` each instead of one read each — capture lists
the lane on every call. Records are written once and never modified in place, so an
unchanged identity means an unchanged header. Orders
(reference §2.3): ``list_records`` newest ``captured_at`` first, ties by name
descending; ``list_for_session`` main thread first, then sub-agents, each newest first.
"""

from __future__ import annotations

import os
import stat
import threading

from ..errors import NotFoundError, ReadRefused
from ..fsio.guarded import open_guarded, read_guarded
from ..limits import TRANSCRIPT_CAP
from .lane import Lane
from .record import Record, RecordFormatError, parse_header, parse_record, split_record

#: Frontmatter is tiny; a listing reads this much of each record, never its body.
_HEAD = 16 << 10
#: A listing's size check on a record file: it reads only the frontmatter, so any
#: record a capture under any configured cap can write is listed (records of 1 GiB
#: and more are real). A whole-body read (``read_body``) keeps its own cap;
#: :func:`open_body` (and :mod:`.body`, built on it) streams a body of any size.
_LIST_CAP = 1 << 44


def _newest_first(records: list[Record]) -> list[Record]:
    return sorted(records, key=lambda r: (r.captured_ns, r.name), reverse=True)


def read_header(path) -> Record:
    """The frontmatter of one record file. Raises ReadRefused or RecordFormatError."""
    size = os.stat(path, follow_symlinks=False).st_size
    data = read_guarded(path, _LIST_CAP, what="record", head=_HEAD)
    if len(data) == _HEAD and b"\n---\n" not in data:
        data = read_guarded(path, TRANSCRIPT_CAP + _HEAD, what="record")
    header, body_start = split_record(data)
    record = parse_header(header)
    record.name = os.path.basename(path)
    record.body_bytes = size - (len(data) - len(body_start))
    return record


_CACHE: dict[str, tuple[tuple[int, int, int], Record]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_MAX = 200_000


def file_identity(st: os.stat_result) -> tuple[int, int, int]:
    """What changes when a record file is replaced: (inode, size, mtime). Records are
    written once and never modified in place, so an unchanged identity is an
    unchanged record (the header cache and the index's sync both rely on it)."""
    return st.st_ino, st.st_size, st.st_mtime_ns


def cached_header(path: str, st: os.stat_result) -> Record:
    """The header of the record file at ``path`` whose ``stat`` is ``st``, read once per
    :func:`file_identity`. Raises OSError, ReadRefused or RecordFormatError."""
    key = file_identity(st)
    with _CACHE_LOCK:
        hit = _CACHE.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    record = read_header(path)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[path] = (key, record)
    return record


def list_records(lane: Lane) -> list[Record]:
    """Every readable record of the lane, newest first. An absent lane is ``[]``.
    The returned Records may be shared with the cache: treat them as read-only."""
    return _newest_first(scan_records(lane))


def scan_files(lane: Lane) -> list[tuple[str, str, os.stat_result]]:
    """``(name, path, stat)`` of every record file of the lane (a regular ``.md`` file,
    not hidden) in directory order, without reading any; ``[]`` for an absent lane."""
    try:
        entries = list(os.scandir(lane.records))
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for entry in entries:
        name = entry.name
        if not name.endswith(".md") or name.startswith("."):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((name, entry.path, st))
    return out


def scan_records(lane: Lane) -> list[Record]:
    """:func:`list_records` in directory order (no sort: ordering parses every
    record's time, which a caller that only compares the set need not pay)."""
    out = []
    for _name, path, st in scan_files(lane):
        try:
            out.append(cached_header(path, st))
        except (OSError, ReadRefused, RecordFormatError):
            continue
    return out


def read_body(lane: Lane, record: Record) -> bytes:
    """The redacted body of ``record``. Raises ReadRefused or RecordFormatError."""
    data = read_guarded(lane.records / record.name, TRANSCRIPT_CAP + _HEAD, what="record")
    return parse_record(data, record.name)[1]


def open_body(lane: Lane, record: Record):
    """``(file, length)``: a binary file object positioned at the first byte of
    ``record``'s body, and the body's length — for reading a record of any size in
    bounded memory. The caller closes the file. Raises ReadRefused or
    RecordFormatError, as :func:`read_body`."""
    path = lane.records / record.name
    fd, size = open_guarded(path, _LIST_CAP, what="record")
    f = os.fdopen(fd, "rb", buffering=1 << 20)
    try:
        head = f.read(_HEAD)
        end = head.find(b"\n---\n", len(b"---\n") - 1)
        if not head.startswith(b"---\n") or end < 0:
            raise RecordFormatError(f"record {record.name} has no frontmatter this reader can find")
        start = end + len(b"\n---\n")
        f.seek(start)
    except BaseException:
        f.close()
        raise
    return f, size - start


def list_for_session(lane: Lane, session_id: str) -> list[Record]:
    """All records of one session: main thread first, then sub-agents; newest first
    within each group. Empty is not an error."""
    mine = [r for r in list_records(lane) if r.session_id == session_id]
    return [r for r in mine if r.is_main_thread] + [r for r in mine if not r.is_main_thread]


def resolve(lane: Lane, key: str, records: list[Record] | None = None) -> Record:
    """Resolve ``key``: exact record filename, then agent id, then the session's main
    thread (newest), then any record of the session. Raises NotFoundError."""
    records = list_records(lane) if records is None else records
    for match in (
        lambda r: r.name == key,
        lambda r: r.agent_id == key,
        lambda r: r.session_id == key and r.is_main_thread,
        lambda r: r.session_id == key,
    ):
        for record in records:
            if match(record):
                return record
    raise NotFoundError(
        f"no record for {key!r} in this repository's store",
        hint="`abcd history list` shows what is stored",
    )
