"""Whole-line chunks of a transcript, read in bounded memory, under the two caps.

Contract of :func:`iter_chunks`:
- It reads at most ``length`` bytes from ``src`` (a binary file object positioned at
  the start) and yields them, in order and byte for byte, as chunks of whole lines:
  every chunk but the last ends with ``\\n``; joined, they are exactly what was read.
- A chunk holds lines up to ``chunk_bytes``; a longer line is a chunk of its own. So
  the memory held is the longest line plus ``chunk_bytes``, never the file.
- A line longer than ``line_cap`` (its newline included) raises :class:`OverCap`
  (``reason="line-too-long"``) as soon as it is seen; nothing is truncated. Fewer
  bytes than ``length`` (the file shrank or was replaced) raises
  :class:`~abcd_daemon.errors.RetryableError`.
- ``hasher`` (a hashlib object), when given, is updated with every byte read.
- PEM safety. The scanner is line-local except for one effect: a PEM private-key
  header whose body runs over the following lines consumes those lines (``pem``).
  Redacting two chunks separately must never split such a block, so a chunk is cut
  before line ``X`` only when no block can be open across the cut: either no line of
  the chunk names ``begin`` (any case: every PEM header does), or ``X`` is a JSON
  object line that cannot be part of a block (it starts with ``{`` and holds no
  ``private``, which every END marker does — the scanner's block walk stops at such
  a line). Claude Code transcripts are JSONL, so every cut is possible there; a text
  file that names a PEM header is held whole from that header to the next JSON line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..errors import RetryableError
from ..scanner.windows import lowered_windows

_PRIVATE = re.compile(rb"(?i)private")
_READ = 1 << 20
#: :func:`names_begin` lower-cases at most this much of a line at a time.
_WINDOW = 1 << 20


class OverCap(RetryableError):
    """A transcript over one of the configured caps: refused whole, never truncated.

    Retryable, not permanent: the cap is a setting, and raising it (then ``abcd
    history retry``) changes the answer. ``reason`` is ``line-too-long`` or
    ``too-big``."""

    def __init__(self, message: str, *, reason: str, hint: str = "") -> None:
        super().__init__(message, hint=hint or (
            "nothing was stored and the transcript is kept; raise max_line_bytes / "
            "max_transcript_bytes in config.toml, restart the daemon, then run "
            "`abcd history retry --all`"))
        self.reason = reason


def line_too_long(what: str, line_no: int, cap: int) -> OverCap:
    return OverCap(f"{what} has a line (line {line_no}) over the {cap}-byte line cap "
                   "(max_line_bytes); refused whole, not truncated, and kept — raise "
                   "max_line_bytes in config.toml, restart the daemon, then `abcd history "
                   "retry`", reason="line-too-long")


def too_big(what: str, size: int, cap: int) -> OverCap:
    return OverCap(f"{what} is {size} bytes, over the {cap}-byte transcript cap "
                   "(max_transcript_bytes); refused whole, not truncated, and kept — raise "
                   "max_transcript_bytes in config.toml, restart the daemon, then `abcd "
                   "history retry`", reason="too-big")


def iter_lines(src, length: int, *, line_cap: int, what: str = "transcript",
               hasher=None, until_eof: bool = False) -> Iterator[bytes]:
    """The lines of the first ``length`` bytes of ``src`` (see the module contract).
    ``until_eof`` (a stream of unknown size, e.g. stdin): end quietly at EOF, and
    refuse with :class:`OverCap` (``too-big``) past ``length`` bytes."""
    left = length + 1 if until_eof else length
    line_no = 0
    while left > 0:
        line = src.readline(min(line_cap + 1, left))
        if not line and until_eof:
            return
        if until_eof and len(line) == left:
            raise too_big(what, length + 1, length)
        if not line:
            raise RetryableError(f"{what} ended {left} bytes short of the size it had "
                                 "when it was opened (it was truncated or replaced)",
                                 hint="nothing was stored; it is retried on the next pass")
        line_no += 1
        if len(line) > line_cap:
            raise line_too_long(what, line_no, line_cap)
        left -= len(line)
        if hasher is not None:
            hasher.update(line)
        yield line


def names_begin(line: bytes) -> bool:
    """True when ``line`` contains ``begin`` in any case (as every PEM header does).
    A case-folded copy and a substring search: several times faster than a
    case-insensitive regex, which has no literal fast path. A long line is folded in
    overlapping windows, so no copy of it is made whole."""
    return any(b"begin" in low for _at, low, _limit in lowered_windows(line, overlap=4, step=_WINDOW))


def cut_is_safe(armed: bool, line: bytes) -> bool:
    """True when a chunk may end before ``line`` (``armed``: the chunk names ``begin``)."""
    if not armed:
        return True
    return line.lstrip()[:1] == b"{" and _PRIVATE.search(line) is None


def iter_chunks(src, length: int, *, line_cap: int, chunk_bytes: int,
                what: str = "transcript", hasher=None, until_eof: bool = False) -> Iterator[bytes]:
    """Chunks of whole lines of the first ``length`` bytes of ``src`` (module contract).
    ``hasher`` is fed chunk by chunk (the same bytes, in order, with fewer calls)."""
    pending: list[bytes] = []
    size = 0
    armed = False
    for line in iter_lines(src, length, line_cap=line_cap, what=what, until_eof=until_eof):
        if pending and size + len(line) > chunk_bytes and cut_is_safe(armed, line):
            chunk = pending[0] if len(pending) == 1 else b"".join(pending)
            pending, size, armed = [], 0, False
            if hasher is not None:
                hasher.update(chunk)
            yield chunk
            del chunk  # the consumer holds it; this frame does not while it reads on
        pending.append(line)
        size += len(line)
        if not armed and names_begin(line):
            armed = True
        del line
    if pending:
        chunk = pending[0] if len(pending) == 1 else b"".join(pending)
        pending = []
        if hasher is not None:
            hasher.update(chunk)
        yield chunk


def hash_prefix(src, length: int, hasher, *, what: str = "transcript") -> None:
    """Feed the first ``length`` bytes of ``src`` to ``hasher`` in bounded blocks.
    Raises RetryableError when fewer bytes are there."""
    left = length
    while left > 0:
        block = src.read(min(_READ, left))
        if not block:
            raise RetryableError(f"{what} ended {left} bytes short of the size it had "
                                 "when it was opened (it was truncated or replaced)",
                                 hint="nothing was stored; it is retried on the next pass")
        hasher.update(block)
        left -= len(block)


def same_prefix(a, b, length: int) -> bool:
    """True when the next ``length`` bytes of file objects ``a`` and ``b`` are equal
    (compared block by block; a short read is a mismatch)."""
    left = length
    while left > 0:
        n = min(_READ, left)
        x, y = a.read(n), b.read(n)
        if len(x) != n or x != y:
            return False
        left -= n
    return True
