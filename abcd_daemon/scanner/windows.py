"""Lower-cased windows of a buffer: case-insensitive literal search in bounded memory.

The keyword prefilter and the home backstop search lower-cased text. A lower-cased
copy of a whole buffer costs as much as the buffer, and a transcript line may be
hundreds of MiB, so both search it a window at a time.

Contract of :func:`lowered_windows`: it yields ``(offset, low, limit)`` for windows
of ``buf[start:end]`` in order, where ``low`` is ``buf[offset : offset + len(low)]``
lower-cased and holds every literal of up to ``overlap + 1`` bytes that *starts*
in ``[offset, limit)``; the ``[offset, limit)`` ranges tile ``[start, end)``
exactly once. A literal found at ``p`` in ``low`` belongs to this window when
``offset + p < limit`` (the next window reports the rest). One window when the
range is at most :data:`STEP` bytes (no copy beyond the one lower-cased slice).
"""

from __future__ import annotations

from collections.abc import Iterator

#: Bytes lower-cased at a time (plus the overlap). Capture hands the scanner
#: 4 MiB batches, so an ordinary batch is one window.
STEP = 4 << 20


def lowered_windows(buf: bytes, start: int = 0, end: int | None = None, overlap: int = 0,
                    step: int | None = None) -> Iterator[tuple[int, bytes, int]]:
    """See the module contract (``step`` defaults to :data:`STEP`)."""
    end = len(buf) if end is None else end
    step = step or STEP
    offset = start
    while offset < end:
        limit = min(end, offset + step)
        yield offset, buf[offset : min(end, limit + overlap)].lower(), limit
        offset = limit
