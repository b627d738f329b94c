"""The one lock primitive: ``flock`` on an owner-only file, polled until a deadline.

Rules (reference §4.6):
- Opened ``O_CREAT | O_RDWR | O_NOFOLLOW`` at 0o600 and verified regular on the
  descriptor; a symlink or other non-regular file at the path is refused.
- ``LOCK_EX | LOCK_NB`` polled with backoff 5 ms doubling to 100 ms until the deadline;
  then :class:`LockContention`.
- After acquiring, the path must still name the same inode: if a lock file was unlinked
  (by hand, or by a cleanup) while a waiter queued on it, the waiter reopens and waits
  for the new file instead of running concurrently with its holder.
- ``flock`` locks belong to the open file description, so two threads of one process
  exclude each other exactly as two processes do.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time

from ..errors import LockContention, StorePathError

_FLAGS = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class HeldLock:
    """A lock that is held: its path and the descriptor holding it."""

    __slots__ = ("path", "fd")

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd


def _open_lock(path: str) -> int:
    try:
        fd = os.open(path, _FLAGS, 0o600)
    except OSError as exc:
        raise StorePathError(f"lock {path!r} is unsafe or unopenable ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise StorePathError(f"lock {path!r} is not a regular file; refusing")
    if st.st_mode & 0o077:
        os.fchmod(fd, 0o600)
    return fd


@contextlib.contextmanager
def file_lock(path, timeout: float):
    """Hold an exclusive lock on ``path`` for the ``with`` body; yields a :class:`HeldLock`.

    Raises :class:`LockContention` when the lock is not acquired within ``timeout``
    seconds and :class:`StorePathError` when the lock path is unsafe.
    """
    path = os.fspath(path)
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        fd = _open_lock(path)
        acquired = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                acquired = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
        if not acquired:
            os.close(fd)
            raise LockContention(
                f"could not acquire lock {path!r} within {timeout:g}s",
                hint="another abcd process holds it; try again shortly",
            )
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # we locked a retired inode; queue behind the newcomer
    held = HeldLock(path, fd)
    try:
        yield held
    finally:
        os.close(fd)
