"""Reading a harness transcript of any size into staging: a streamed, settled copy.

:func:`copy_settled` is intake's read (DESIGN §3.2 steps 3 and 5) without holding the
transcript in memory:
- the source is opened guarded (regular, no symlinked leaf, owned by this uid) and
  refused whole over ``max_transcript_bytes``; it is copied block by block into an
  owner-only ``.abcd-tmp-*`` file in the lane's ``staging/`` and fsynced, at most
  ``cap + 1`` bytes read (a file growing past the cap while copied is refused too);
- every line's length is checked as it streams by: a line over ``max_line_bytes``
  refuses the transcript whole (:class:`~abcd_daemon.store.chunks.OverCap`);
- settling: before copying, the source's own last non-blank line is polled (read
  backwards from the end, at most one line) until it is complete JSON or
  ``timeout_s`` passes, so an unsettled transcript of any size is copied once, not
  once per poll; the copy is judged again (it may have grown mid-copy) and taken
  again only while time remains; one that never settles is kept and flagged;
- the copy must be a JSONL transcript: one of its first lines is a JSON object
  (read forwards, line by line, under the line cap).
On any refusal the temp file is removed. The caller stages the temp file
(``queue.stage.stage_file``) and removes it if staging did not take it.
:func:`copy_once` is one such copy without the wait: ingest's (the file is already
known to be a transcript, and is staged as it is now).
"""

from __future__ import annotations

import os
import time
from typing import Callable

from ..errors import AbcdError, InputError, ReadRefused
from ..fsio.atomic import temp_file
from ..fsio.guarded import open_guarded
from ..store.chunks import iter_lines, line_too_long, too_big
from .harness import has_json_object_line, transcript_settled

_BLOCK = 1 << 20
#: What polling the source reads at most: its head (is it JSONL-shaped?) and its last
#: line (complete yet?). A longer last line is left to the copy to judge.
_WAIT_PROBE = 1 << 20


def _copy(src: int, dst: int, cap: int, line_cap: int, shown) -> int:
    """Copy ``src`` to ``dst`` checking line lengths; return the bytes copied."""
    total = 0
    line = 0  # length of the line in progress
    line_no = 1
    while True:
        block = os.read(src, _BLOCK)
        if not block:
            return total
        total += len(block)
        if total > cap:
            raise too_big(f"transcript {str(shown)!r}", total, cap)
        start = 0
        while True:
            nl = block.find(b"\n", start)
            if nl < 0:
                line += len(block) - start
                break
            if line + nl + 1 - start > line_cap:
                raise line_too_long(f"transcript {str(shown)!r}", line_no, line_cap)
            line = 0
            line_no += 1
            start = nl + 1
        if line > line_cap:
            raise line_too_long(f"transcript {str(shown)!r}", line_no, line_cap)
        view = memoryview(block)
        while view:
            view = view[os.write(dst, view):]


def last_line(fd: int, size: int, limit: int) -> bytes | None:
    """The last non-blank line of the file, or None when it is longer than ``limit``
    (it is never read past ``limit`` + one block)."""
    end = size
    while end > 0:  # skip trailing blank bytes
        lo = max(0, end - 4096)
        tail = os.pread(fd, end - lo, lo).rstrip(b" \t\r\n")
        if tail:
            end = lo + len(tail)
            break
        end = lo
    pieces: list[bytes] = []
    got = 0
    pos = end
    while pos > 0:
        if got > limit:
            return None
        lo = max(0, pos - min(_BLOCK, limit + 1))
        block = os.pread(fd, pos - lo, lo)
        nl = block.rfind(b"\n")
        if nl >= 0:
            pieces.append(block[nl + 1:])
            break
        pieces.append(block)
        got += len(block)
        pos = lo
    line = b"".join(reversed(pieces))
    return line if len(line) <= limit else None


def head_is_jsonl(fd: int, size: int, line_cap: int, probe: int = 1000) -> bool:
    """:func:`~.harness.has_json_object_line` over the file's first lines, read one
    at a time (blank lines are not counted)."""
    with os.fdopen(os.dup(fd), "rb", buffering=_BLOCK) as f:
        f.seek(0)
        seen = 0
        for line in iter_lines(f, size, line_cap=max(line_cap, 1)):
            if not line.strip():
                continue
            if has_json_object_line(line, probe=1):
                return True
            seen += 1
            if seen >= probe:
                return False
    return False


def copy_once(path: str, staging, *, max_bytes: int, line_cap: int, owner: int | None = None,
              require_jsonl: bool = True) -> tuple[str, int, bool]:
    """Copy the transcript at ``path`` into a new owner-only temp file in ``staging``,
    once, under both caps, and fsync it. Returns ``(temp path, size, settled)``
    (``settled``: its last non-blank line is complete JSON). Raises ReadRefused
    (symlink, FIFO, over the cap, empty, missing, ``owner`` not its owner), OverCap
    (a line over ``line_cap``), InputError (``require_jsonl`` and none of its first
    lines is a JSON object) or OSError (disk). On any error the temp file is gone."""
    try:
        src, _ = open_guarded(path, max_bytes, what="transcript", allow_empty=False, owner=owner)
    except ReadRefused as exc:
        if exc.reason == "too-big":
            raise too_big(f"transcript {path!r}", os.stat(path).st_size, max_bytes) from None
        raise
    try:
        fd, tmp = temp_file(staging)
    except BaseException:
        os.close(src)
        raise
    try:
        try:
            size = _copy(src, fd, max_bytes, line_cap, path)
        finally:
            os.close(src)
        if size == 0:
            raise ReadRefused(f"transcript {path!r} is empty", reason="empty")
        os.fsync(fd)
        if require_jsonl and not head_is_jsonl(fd, size, line_cap):
            raise InputError("the payload's transcript is not a JSONL transcript (none of "
                             "its lines is a JSON object); nothing was stored",
                             hint="give the .jsonl file the harness wrote")
        line = last_line(fd, size, line_cap)
        settled = line is not None and transcript_settled(line)
        del line
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    return tmp, size, settled


def copy_settled(path: str, staging, *, max_bytes: int, line_cap: int, timeout_s: float,
                 poll_s: float, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> tuple[str, int, bool]:
    """Copy the transcript at ``path`` into ``staging`` (:func:`copy_once`, owned by
    this uid, JSONL-shaped) until it settles or ``timeout_s`` passes. Returns
    ``(temp path, size, settled)``. Raises as :func:`copy_once`."""
    deadline = clock() + timeout_s
    while True:
        _wait_for_source(path, max_bytes, line_cap, deadline, poll_s, sleep, clock)
        tmp, size, settled = copy_once(path, staging, max_bytes=max_bytes, line_cap=line_cap,
                                       owner=os.geteuid())
        if settled or clock() >= deadline:
            return tmp, size, settled
        _unlink(tmp)
        sleep(poll_s)


def _wait_for_source(path: str, max_bytes: int, line_cap: int, deadline: float, poll_s: float,
                     sleep: Callable[[float], None], clock: Callable[[], float]) -> None:
    """Poll the source's last line until it is complete JSON or ``deadline`` passes.
    Reads at most ``_WAIT_PROBE`` bytes at either end per poll. Returns at once for a
    file that does not look like JSONL, and on any refusal: the copy that follows
    reports it."""
    try:
        fd, size = open_guarded(path, max_bytes, what="transcript", owner=os.geteuid())
    except ReadRefused:
        return
    try:
        if not size or b"{" not in os.pread(fd, _WAIT_PROBE, 0):
            return  # not JSONL-shaped: the copy refuses it without waiting
        while clock() < deadline:
            line = last_line(fd, size, min(line_cap, _WAIT_PROBE))
            if line is None or transcript_settled(line):
                return  # settled, or a last line too long to poll: the copy judges it
            sleep(poll_s)
            size = os.fstat(fd).st_size
    except (AbcdError, OSError):
        return
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
