"""The temp file a lean read spills to (:mod:`.block_spill`, :mod:`.render_spill`).

:class:`SpillFile` is an anonymous, owner-only temp file (unlinked at once, gone when
closed or collected) that records are appended to and read back from at their offsets,
nearly in the order they were written: :meth:`SpillFile._read` serves a short read from
a read-ahead window of :data:`WINDOW` bytes, a long one directly. A subclass appends
(its ``_end`` is the next record's offset), sets ``_dirty`` after writing and empties
``_window`` before it (what is read back must be what was written), and flushes before
reading. Pure apart from the temp file.
"""

from __future__ import annotations

import os
import tempfile

#: The read-ahead window: records are read back nearly in the order they were written.
WINDOW = 1 << 20


class SpillFile:
    def __init__(self, directory=None) -> None:
        self._file = tempfile.TemporaryFile(dir=directory)  # 0600, already unlinked
        self._end = 0
        self._dirty = False
        self._window = b""
        self._window_at = 0

    def close(self) -> None:
        self._file.close()

    def _pread(self, n: int, at: int) -> bytes:
        fd = self._file.fileno()
        data = os.pread(fd, n, at)
        while len(data) < n:  # pread may return less: read on until it is whole
            more = os.pread(fd, n - len(data), at + len(data))
            if not more:
                break
            data += more
        return data

    def _read(self, n: int, at: int):
        """Bytes [at, at + n) of the file: from the read-ahead window when it holds them,
        else read directly."""
        start = self._window_at
        if start <= at and at + n <= start + len(self._window):
            return memoryview(self._window)[at - start:at - start + n]
        if n <= WINDOW // 2:
            self._window, self._window_at = self._pread(WINDOW, at), at
            return memoryview(self._window)[:n]
        return self._pread(n, at)
