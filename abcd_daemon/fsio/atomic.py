"""Atomic write: a reader sees the old file or the new one, never a part.

The commit step is synchronous and has no checkpoint inside: temp file in the same
directory → write → ``fchmod`` on the descriptor → ``fsync`` → ``os.replace`` →
``fsync`` of the directory. A kill at any instant leaves either the old file or the
new one under the name, plus at worst a ``.abcd-tmp-*`` file that
:func:`sweep_temp_files` removes (invariant 8).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..errors import StorePathError

TEMP_PREFIX = ".abcd-tmp-"


def fsync_dir(path) -> None:
    """fsync a directory so a rename or unlink inside it is durable. Best effort."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def refuse_symlink_leaf(path) -> None:
    """Raise :class:`StorePathError` if ``path`` exists and is a symlink."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise StorePathError(f"{str(path)!r} is a symlink; refusing to write through it")


def atomic_write(path, data: bytes, *, mode: int = 0o600, durable: bool = True,
                 sync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` atomically with permissions ``mode``.

    Raises :class:`StorePathError` if a symlink occupies ``path``; ``OSError`` (ENOSPC,
    EIO, …) if the write fails, in which case the previous file is untouched and no
    temp file is left. ``durable=False`` skips the fsyncs (only for throwaway files).
    ``sync_dir=False`` skips the directory fsync: only for a write that is followed by
    another durable write into the same directory, whose directory fsync covers both.
    """
    path = Path(path)
    refuse_symlink_leaf(path)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable and sync_dir:
        fsync_dir(path.parent)


def sweep_temp_files(directory) -> int:
    """Remove leftover ``.abcd-tmp-*`` files in ``directory`` (from a killed writer).

    Returns how many were removed. Only call this where no writer is running (the
    daemon calls it at start-up, under its instance lock).
    """
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if name.startswith(TEMP_PREFIX):
            try:
                os.unlink(os.path.join(directory, name))
                removed += 1
            except OSError:
                pass
    return removed
