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


def _create_temp(directory: Path) -> tuple[int, str]:
    """A new, exclusively created, owner-only file in ``directory``, open for reading and writing (as ``mkstemp``): (fd, path). Named
    ``TEMP_PREFIX`` + 16 random hex digits (``os.urandom``: ``tempfile`` costs the CLI's
    start-up a few milliseconds of imports); ``O_EXCL | O_NOFOLLOW``, so an existing
    name — a planted symlink included — is never opened, only skipped."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = os.path.join(directory, TEMP_PREFIX + os.urandom(8).hex())
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {str(directory)!r} after 100 tries")


def _write_temp(path: Path, data: bytes, mode: int, durable: bool) -> str:
    """Write ``data`` to a new temp file beside ``path``; return its name. On failure
    the temp file is removed and the OSError names ``path``."""
    fd, tmp = _create_temp(path.parent)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if durable:
            os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        _unlink_quietly(tmp)
        _name(exc, path)
        raise
    os.close(fd)
    return tmp


def _unlink_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _name(exc: BaseException, path: Path) -> None:
    if isinstance(exc, OSError) and exc.filename is None:
        exc.filename = str(path)  # so every report says which write failed


def atomic_write(path, data: bytes, *, mode: int = 0o600, durable: bool = True,
                 sync_dir: bool = True) -> None:
    """Write ``data`` to ``path`` atomically with permissions ``mode``.

    Raises :class:`StorePathError` if a symlink occupies ``path``; ``OSError`` (ENOSPC,
    EIO, …, naming ``path``) if the write fails, in which case the previous file is
    untouched and no temp file is left. ``durable=False`` skips the fsyncs (only for
    throwaway files). ``sync_dir=False`` skips the directory fsync: only for a write
    that is followed by another durable write into the same directory.
    """
    atomic_write_all([(path, data)], mode=mode, durable=durable, sync_dir=sync_dir)


def atomic_write_all(items, *, mode: int = 0o600, durable: bool = True,
                     sync_dir: bool = True) -> None:
    """Replace several files of ONE directory, all or (almost surely) none.

    Every new content is written and fsynced to a temp file first; only when all of
    them are on disk are they renamed into place, in order, and the directory fsynced
    once. A failed write (ENOSPC, EIO) therefore changes nothing. A rename failing
    after an earlier one succeeded — which needs the filesystem to fail between two
    renames in one directory — leaves the earlier files replaced; the caller orders
    ``items`` so that this state is the safe one.
    """
    items = [(Path(p), d) for p, d in items]
    for path, _ in items:
        refuse_symlink_leaf(path)
    temps: list[str] = []
    try:
        for path, data in items:
            temps.append(_write_temp(path, data, mode, durable))
        for i, (path, _) in enumerate(items):
            try:
                os.replace(temps[i], path)
            except OSError as exc:
                _name(exc, path)
                raise
            temps[i] = ""
    except BaseException:
        for tmp in temps:
            if tmp:
                _unlink_quietly(tmp)
        raise
    if durable and sync_dir:
        fsync_dir(items[0][0].parent)


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


def temp_file(directory) -> tuple[int, str]:
    """A new owner-only ``.abcd-tmp-*`` file in ``directory``: ``(fd, path)``. A killed
    writer's leftover is removed by :func:`sweep_temp_files`; readers never list it."""
    return _create_temp(directory)


def _copy_all(src_fd: int, dst_fd: int, length: int, start: int = 0) -> None:
    """Copy ``length`` bytes from ``src_fd``'s offset ``start`` to ``dst_fd``'s position."""
    offset = 0
    try:
        while offset < length:
            n = os.copy_file_range(src_fd, dst_fd, length - offset, start + offset)
            if n == 0:
                raise OSError(5, "short copy")
            offset += n
        return
    except (AttributeError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno not in (18, 22, 38, 95, 1):  # EXDEV EINVAL ENOSYS EOPNOTSUPP EPERM
            raise
    while offset < length:
        block = os.pread(src_fd, min(1 << 20, length - offset), start + offset)
        if not block:
            raise OSError(5, "short copy")
        view = memoryview(block)
        while view:
            view = view[os.write(dst_fd, view):]
        offset += len(block)


def atomic_assemble(path, head: bytes, body_path, body_len: int, *, mode: int = 0o600,
                    body_offset: int = 0) -> None:
    """Write ``head`` followed by ``body_len`` bytes of the file at ``body_path``
    (from ``body_offset``, its start by default) to ``path`` atomically (temp → fsync → ``os.replace`` → fsync dir),
    copying the body in the kernel where it can, in bounded memory otherwise.

    The contract of :func:`atomic_write` holds: a reader sees the old file or the
    whole new one, a kill leaves at worst a ``.abcd-tmp-*`` file, an OSError names
    ``path`` and leaves nothing behind. ``body_path`` is left for the caller."""
    import tempfile  # here: importing fsio stays cheap for the CLI's start-up

    path = Path(path)
    refuse_symlink_leaf(path)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        os.fchmod(fd, mode)
        view = memoryview(head)
        while view:
            view = view[os.write(fd, view):]
        src = os.open(body_path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        try:
            _copy_all(src, fd, body_len, body_offset)
        finally:
            os.close(src)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException as exc:
        if fd >= 0:
            os.close(fd)
        _unlink_quietly(tmp)
        _name(exc, path)
        raise
    fsync_dir(path.parent)
