"""Files of the user's cache directory (derived data: the compiled gate database, the
root commits the CLI remembers): read and written best effort, inside a directory
verified like every directory abcd uses (:mod:`abcd_daemon.safedir`).

Rules:
- :func:`read_cached` answers None for anything but a regular file of ours, owner-only
  (no group or other bits), no larger than ``cap``, opened by descriptor without
  following a link — a cache someone else could have written is never trusted.
- :func:`write_cached` writes a temp file beside the name (``O_EXCL | O_NOFOLLOW``,
  0600) and renames it over the name: a reader sees the old file or the new one. It
  never raises: a cache that cannot be written is rebuilt next time.
Both open the directory chain once, with :func:`abcd_daemon.safedir.open_chain`.
"""

from __future__ import annotations

import os

from .. import safedir


def read_cached(cache_dir: str, name: str, cap: int) -> bytes | None:
    """The bytes of ``cache_dir/name``, or None (see the module rules)."""
    try:
        dir_fd = safedir.open_chain(cache_dir)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.geteuid() or st.st_mode & 0o077 or st.st_size > cap:
            return None
        try:
            data = f.read(cap + 1)
        except OSError:
            return None
    return data if len(data) <= cap else None  # it grew while read: not the file checked


def write_cached(cache_dir: str, name: str, data: bytes) -> bool:
    """Replace ``cache_dir/name`` with ``data`` (the directory made 0700 if missing).
    True when written."""
    try:
        dir_fd = safedir.open_chain(cache_dir, create=True)
    except OSError:
        return False
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return True
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        return False
    finally:
        os.close(dir_fd)
