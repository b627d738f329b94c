"""One daemon per user: the instance lock and the listening socket.

Rules (DESIGN §3.8):
- Single instance: an exclusive ``flock`` on ``daemon.lock`` beside the socket, held for
  the daemon's lifetime. Liveness is never judged by a ping or a pid: only the lock.
- Only the lock holder may remove a stale socket file, and only if it *is* a socket.
- The socket's directory is created 0o700 and verified; the socket is chmod 0o600
  right after ``bind``.
- A socket passed by systemd (``LISTEN_PID`` = our pid, ``LISTEN_FDS`` ≥ 1, fd 3) or by
  launchd (``launch_activate_socket``) is used as it is and never unlinked.
"""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import sys

from ..errors import AbcdError, StorePathError

SD_LISTEN_FDS_START = 3


class AlreadyRunning(AbcdError):
    """Another daemon holds the instance lock."""


def acquire_instance_lock(lock_path: str) -> int:
    """Take the instance lock; returns its fd (keep it open). Raises AlreadyRunning."""
    directory = os.path.dirname(lock_path)
    ensure_socket_dir(directory)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = ""
        try:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
        except OSError:
            pass
        os.close(fd)
        raise AlreadyRunning(
            f"another abcd daemon is running (it holds {lock_path}"
            + (f", pid {holder}" if holder else "") + ")",
            hint="`abcd daemon status` talks to it; stop it before starting another",
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def ensure_socket_dir(directory: str) -> None:
    """Create ``directory`` 0o700 if missing; refuse a symlink or a foreign owner."""
    os.makedirs(os.path.dirname(directory) or "/", exist_ok=True)
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise StorePathError(f"{directory!r} is not a directory owned by this user; refusing to "
                             "put the daemon's socket there")
    if st.st_mode & 0o077:
        os.chmod(directory, 0o700)


def remove_stale_socket(path: str) -> bool:
    """Remove a leftover socket file at ``path``. Call only while holding the instance
    lock. Refuses (StorePathError) when something other than a socket is there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISSOCK(st.st_mode):
        raise StorePathError(f"{path!r} exists and is not a socket; refusing to replace it")
    os.unlink(path)
    return True


def bind_socket(path: str) -> socket.socket:
    """Bind and listen on a fresh Unix socket at ``path`` (mode 0o600)."""
    remove_stale_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def launchd_socket(name: str = "Listeners") -> socket.socket | None:
    """The listening socket launchd holds for us under ``name`` (the plist's Sockets
    key), or None when we were not started by launchd. macOS only; it cannot run on
    this project's Linux CI, so it is written to the documented C API and kept small."""
    if sys.platform != "darwin":
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fds = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t(0)
    try:
        activate = libc.launch_activate_socket
    except AttributeError:
        return None
    if activate(name.encode(), ctypes.byref(fds), ctypes.byref(count)) != 0 or count.value < 1:
        return None
    fd = fds[0]
    libc.free(fds)
    return socket.socket(fileno=fd)


def inherited_socket(env=None) -> socket.socket | None:
    """The listening socket systemd (``LISTEN_FDS``) or launchd passed us, or None."""
    env = os.environ if env is None else env
    if sys.platform == "darwin":
        return launchd_socket()
    try:
        pid = int(env.get("LISTEN_PID", "0"))
        count = int(env.get("LISTEN_FDS", "0"))
    except ValueError:
        return None
    if pid != os.getpid() or count < 1:
        return None
    sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    os.set_inheritable(SD_LISTEN_FDS_START, False)
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The connecting process's uid (SO_PEERCRED on Linux, getpeereid elsewhere)."""
    if hasattr(socket, "SO_PEERCRED"):
        import struct

        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
        if libc.getpeereid(sock.fileno(), ctypes.byref(uid), ctypes.byref(gid)) == 0:
            return uid.value
    except (OSError, AttributeError):
        pass
    return None
