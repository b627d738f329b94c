"""Reading a record's body back, in bounded memory: the one way every reader (reconstruct,
``abcd history show``, the search index) reads a body of any size.

Contract of :class:`RecordBody` (made by :func:`body_of`):
- Opening checks what :func:`~.records.read_body` checks (a regular file, not a
  symlink, a frontmatter this reader finds) and raises the same errors
  (:class:`~abcd_daemon.errors.ReadRefused`, :class:`~.record.RecordFormatError`), so a
  caller learns at once that a body cannot be read. ``length`` is the body's size.
- :meth:`RecordBody.lines` yields the body's lines without their newline (``bytes``,
  or a ``bytearray`` for a line that ran over read blocks), exactly as
  ``body.split(b"\\n")`` would (a final ``b""`` after a trailing newline included), each
  time it is called from the start (the file is opened again: records are written once
  and replaced only by rename, so a second pass reads the same bytes). Memory is the
  longest line plus one read block, never the body. A line longer than
  :data:`LINE_CAP` is yielded as one ``b"\\x00"`` (it cannot be JSON, so readers count
  it unparseable) instead of being held.
- :meth:`RecordBody.chunks` yields the body in blocks of at most ``size`` bytes, in
  order, byte for byte.
- :meth:`RecordBody.read` returns the body whole, refused (ReadRefused) over
  :data:`~abcd_daemon.limits.TRANSCRIPT_CAP`: for callers that need it in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ReadRefused
from ..limits import MIB, TRANSCRIPT_CAP
from .lane import Lane
from .record import Record
from .records import open_body

#: A body line longer than this is not held (the capture's own line cap is 256 MiB by
#: default; a record holding a longer line was written by something else).
LINE_CAP = 1 << 30
_BLOCK = 1 * MIB


class RecordBody:
    """One record's body, read on demand (see the module contract)."""

    __slots__ = ("lane", "record", "length")

    def __init__(self, lane: Lane, record: Record) -> None:
        self.lane = lane
        self.record = record
        f, self.length = open_body(lane, record)
        f.close()

    def _open(self):
        f, length = open_body(self.lane, self.record)
        return f, length

    def chunks(self, size: int = 0) -> Iterator[bytes]:
        size = size or _BLOCK
        f, left = self._open()
        with f:
            while left > 0:
                block = f.read(min(size, left))
                if not block:
                    return
                left -= len(block)
                yield block

    def lines(self) -> Iterator[bytes]:
        span: bytearray | None = None  # a line that runs over blocks, grown in place
        over = False  # that line is past LINE_CAP: dropped, yielded as one b"\x00"
        for block in self.chunks():
            end = block.find(b"\n")
            if end < 0:
                if span is None:
                    span = bytearray()
                if not over and len(span) + len(block) <= LINE_CAP:
                    span += block
                else:
                    span, over = bytearray(), True
                continue
            if span is not None:
                if over or len(span) + end > LINE_CAP:
                    yield b"\x00"
                else:
                    span += block[:end]
                    yield span
                span, over = None, False
            else:
                yield block[:end]
            last = block.rfind(b"\n")
            if last > end:
                yield from block[end + 1:last].split(b"\n")
            if last + 1 < len(block):
                span = bytearray(block[last + 1:])
        if over:
            yield b"\x00"
        else:
            yield b"" if span is None else span

    def read(self) -> bytes:
        if self.length > TRANSCRIPT_CAP:
            raise ReadRefused(
                f"record {self.record.name!r} has a {self.length}-byte body, over the "
                f"{TRANSCRIPT_CAP}-byte cap for reading one whole", reason="too-big")
        return b"".join(self.chunks())


def body_of(lane: Lane, record: Record) -> RecordBody:
    """The body of ``record``, checked readable now, read later. Raises ReadRefused or
    RecordFormatError."""
    return RecordBody(lane, record)
