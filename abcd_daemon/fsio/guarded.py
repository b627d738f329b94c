"""Guarded read: the one way abcd reads a file somebody else may have planted.

Rules (reference §2.1):
- One ``open`` with ``O_NOFOLLOW | O_NONBLOCK``: a symlinked leaf fails (``ELOOP``) and a
  FIFO or device opens without blocking.
- ``fstat`` of the *same descriptor* decides: anything but a regular file is refused.
- Over the cap is refused whole, never truncated; a file that grows past the cap while
  it is read is refused too (we read at most ``cap + 1`` bytes).
- With ``owner``, a file owned by any other uid is refused before a byte is read: a
  payload must never make abcd read another user's file into this user's corpus.
- With ``dir_fd``, ``path`` is a name opened relative to that (verified) directory
  descriptor and ``shown`` names it in messages.
"""

from __future__ import annotations

import errno
import os
import stat

from ..errors import ReadRefused

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def open_guarded(
    path, cap: int, *, what: str = "file", allow_empty: bool = True,
    owner: int | None = None, dir_fd: int | None = None, shown=None,
) -> tuple[int, int]:
    """Open the regular file at ``path`` for reading under the same checks as
    :func:`read_guarded`; return ``(fd, size)``. The caller owns (and closes) ``fd``.

    Checks made here (before a byte is read): no symlinked leaf, a regular file, the
    owner when ``owner`` is given, ``size <= cap``, and non-empty unless
    ``allow_empty``. A file growing past ``cap`` while it is read is the reader's to
    refuse (:func:`read_guarded` and the streaming readers read at most ``cap + 1``).
    Raises :class:`ReadRefused` as :func:`read_guarded` does."""
    if shown is None:
        shown = path
    try:
        fd = os.open(path, _FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise ReadRefused(f"{what} {str(shown)!r} does not exist", reason="missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _not_regular(shown, what, "a symlink") from None
        raise ReadRefused(
            f"{what} {str(shown)!r} could not be opened ({exc.strerror})", reason="unreadable"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(shown, what, _KINDS.get(stat.S_IFMT(st.st_mode), "not a file"))
        if owner is not None and st.st_uid != owner:
            raise ReadRefused(
                f"{what} {str(shown)!r} is owned by uid {st.st_uid}, not by this user (uid "
                f"{owner}); refusing to read another user's file", reason="foreign-owner")
        if st.st_size > cap:
            raise _too_big(shown, what, cap)
        if st.st_size == 0 and not allow_empty:
            raise ReadRefused(f"{what} {str(shown)!r} is empty", reason="empty")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_guarded(
    path, cap: int, *, what: str = "file", allow_empty: bool = True, head: int = 0,
    owner: int | None = None, dir_fd: int | None = None, shown=None,
) -> bytes:
    """Return the whole content of the regular file at ``path``.

    Raises :class:`ReadRefused` (``reason``: ``missing``, ``not-regular``, ``too-big``,
    ``empty``, ``foreign-owner`` or ``unreadable``) with a message naming ``what``, the
    path and, for a non-regular file, what it is. Never returns a truncated file, never
    blocks on a FIFO, never follows a symlinked leaf.

    With ``head > 0`` only the first ``head`` bytes are returned (the cap still applies
    to the file's size): listings read frontmatter without reading bodies.
    """
    if shown is None:
        shown = path
    fd, _ = open_guarded(path, cap, what=what, owner=owner, dir_fd=dir_fd, shown=shown)
    try:
        # The file is regular, so clear O_NONBLOCK's effect on nothing; read to cap + 1.
        chunks = []
        remaining = min(head, cap) if head > 0 else cap + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise ReadRefused(
            f"{what} {str(shown)!r} could not be read ({exc.strerror})", reason="unreadable"
        ) from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise _too_big(shown, what, cap)
    if not data and not allow_empty:
        raise ReadRefused(f"{what} {str(shown)!r} is empty", reason="empty")
    return data


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def _not_regular(path, what: str, kind: str) -> ReadRefused:
    return ReadRefused(
        f"{what} {str(path)!r} is not a readable regular file: it is {kind} "
        "(a symlink or non-regular file is refused)",
        reason="not-regular",
    )


def _too_big(path, what: str, cap: int) -> ReadRefused:
    return ReadRefused(
        f"{what} {str(path)!r} is over the {cap}-byte cap; refused whole, not truncated",
        reason="too-big",
    )
