"""A list of ``str`` pieces that keeps only a bounded tail in memory.

:class:`Spill` takes what a renderer would append to a list (``append``, ``extend``) and,
once more than :data:`FLUSH_CHARS` characters are held, writes them UTF-8 encoded
(``"replace"`` errors, as the artefact is encoded) to an anonymous, owner-only temp file
(unlinked at once, gone when closed). :meth:`Spill.copy_to` writes everything, in order,
to a binary file. :meth:`Spill.append_bytes` takes a piece already encoded (a rendered
spill's, :mod:`.render_spill`), in its place in the order. Encoding piece by piece gives the bytes encoding the joined string
would: a Python string has no multi-unit characters for a cut to split.

:class:`SpillFile` is the temp file a lean read spills to (:mod:`.block_spill`,
:mod:`.render_spill`): records appended and read back at their offsets, nearly in the
order they were written — :meth:`SpillFile._read` serves a short read from a read-ahead
window of :data:`WINDOW` bytes, a long one directly. A subclass appends (its ``_end`` is
the next record's offset), sets ``_dirty`` after writing, empties ``_window`` before it
(what is read back must be what was written) and flushes before reading.
"""

from __future__ import annotations

import os
import shutil
import tempfile

#: Characters held before they are written out.
FLUSH_CHARS = 1 << 20


class Spill:
    def __init__(self, directory=None) -> None:
        self._file = tempfile.TemporaryFile(dir=directory)  # mode 0600, already unlinked
        self._held: list[str] = []
        self._encoded: list = []  # what is held already encoded, in order after nothing held
        self._chars = 0

    def __enter__(self) -> "Spill":
        return self

    def __exit__(self, *exc) -> None:
        self._file.close()

    def append(self, piece: str) -> None:
        self._held.append(piece)
        self._chars += len(piece)
        if self._chars >= FLUSH_CHARS:
            self._flush()

    def append_bytes(self, data) -> None:
        """Append ``data`` (bytes-like, not changed after), already encoded as
        :meth:`append` would encode it."""
        if self._held:
            self._encoded.append("".join(self._held).encode("utf-8", "replace"))
            self._held = []
        self._encoded.append(data)
        self._chars += len(data)
        if self._chars >= FLUSH_CHARS:
            self._flush()

    def extend(self, pieces) -> None:
        for piece in pieces:
            self.append(piece)

    def _flush(self) -> None:
        if self._held:
            self._encoded.append("".join(self._held).encode("utf-8", "replace"))
            self._held = []
        if self._encoded:
            self._file.write(b"".join(self._encoded))
            self._encoded = []
        self._chars = 0

    def copy_to(self, out) -> int:
        """Write every piece so far to ``out``; returns the bytes written. Into a file
        with a descriptor the kernel copies (``copy_file_range``), else it is read and
        written a MiB at a time."""
        self._flush()
        size = self._file.tell()
        done = _copy_range(self._file, out, size)
        self._file.seek(done)
        shutil.copyfileobj(self._file, out, 1 << 20)
        return size


def _copy_range(src, out, size: int) -> int:
    """Copy bytes [0, size) of ``src`` to ``out`` at its position, in the kernel; how
    many were copied (0 when ``out`` has no descriptor or the kernel cannot)."""
    copy = getattr(os, "copy_file_range", None)
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        return 0
    if copy is None:
        return 0
    src.flush()
    out.flush()
    done = 0
    try:
        start = out.tell()
        while done < size:
            n = copy(src.fileno(), fd, size - done, done)
            if n <= 0:
                break
            done += n
    except OSError:  # a pipe, an append-only file, an old kernel…: copied the other way
        pass
    if done:
        out.seek(start + done)  # where the copy left the descriptor, told to ``out`` too
    return done


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
