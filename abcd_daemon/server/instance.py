"""One daemon per socket and per store: the instance locks and the listening socket.

Rules (DESIGN §3.8):
- Single instance: an exclusive ``flock`` on ``ABCD_HOME/daemon.lock`` (one daemon per
  store, whatever socket it was told to use) and on ``daemon.lock`` beside the socket
  (one daemon per socket), both held for the daemon's lifetime. Liveness is never
  judged by a ping or a pid: only the locks.
- Only the lock holder may remove a stale socket file, and only if it *is* a socket.
- The socket's directory is created 0o700 when missing; an existing one must already
  be a real directory of this uid that nobody else can write (:mod:`abcd_daemon.safedir`)
  and is refused otherwise — never chmodded (``ABCD_SOCKET=/tmp/x.sock`` must not lock
  every user out of ``/tmp``). The socket is chmod 0o600 right after ``bind``.
- The socket listens with the system's maximum backlog, so a burst of hooks queues
  instead of being refused (``EAGAIN``).
- A socket passed by systemd (``LISTEN_PID`` = our pid, ``LISTEN_FDS`` ≥ 1, fd 3) or by
  launchd (``launch_activate_socket``) is used as it is and never unlinked.
"""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import sys

from .. import safedir
from ..errors import AbcdError, StorePathError
from ..fsio.dirs import ensure_chain
from ..paths import Home, lock_path

SD_LISTEN_FDS_START = 3


class AlreadyRunning(AbcdError):
    """Another daemon holds the instance lock."""


def _lock(path: str, whose: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
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
            f"another abcd daemon is running {whose} (it holds {path}"
            + (f", pid {holder}" if holder else "") + ")",
            hint="`abcd daemon status` talks to it (with the same ABCD_HOME and ABCD_SOCKET); "
                 "stop it before starting another",
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def acquire_instance_locks(home: Home, env=None) -> list[int]:
    """Take the store's lock, then the socket's; returns their fds (keep them open).
    Raises AlreadyRunning, or StorePathError for an unusable home or socket directory."""
    ensure_chain(home.root)
    fds = [_lock(str(home.daemon_lock), "on this store")]
    try:
        path = lock_path(env)
        ensure_socket_dir(os.path.dirname(path))
        fds.append(_lock(path, "on this socket"))
    except BaseException:
        os.close(fds[0])
        raise
    return fds


def ensure_socket_dir(directory: str) -> None:
    """Create ``directory`` 0o700 if missing; an existing one must be ours and writable by
    nobody else (never chmodded). Raises StorePathError saying which and what to do."""
    try:
        os.close(safedir.open_chain(directory, create=True))
    except OSError as exc:
        why = exc.why if isinstance(exc, safedir.Refused) else (exc.strerror or str(exc))
        raise StorePathError(
            f"the socket directory {directory!r} {why}; refusing to put the daemon's socket "
            "there (abcd never changes the mode of a directory it did not create)",
            hint="point ABCD_SOCKET at a path in a directory only you own and can write, or at "
                 "one that does not exist yet (abcd creates it owner-only)") from None


def listen_backlog() -> int:
    """The system's maximum listen backlog (``net.core.somaxconn``), else SOMAXCONN."""
    try:
        with open("/proc/sys/net/core/somaxconn", "rb") as f:
            return max(int(f.read().strip()), socket.SOMAXCONN)
    except (OSError, ValueError):
        return socket.SOMAXCONN


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
        sock.listen(listen_backlog())
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
