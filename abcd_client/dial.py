"""Reaching the daemon, whatever the codec: the socket, the store check, and when a
verb works in-process instead. Standard library and abcd's error tree only — no
msgspec — so the msgpack client (:mod:`.connect`) and the JSON one
(:mod:`.json_client`) share every rule here.

Rules:
- ``ABCD_LOCAL=1`` forces in-process: no socket is opened.
- Nothing listening (no socket, connection refused, no Welcome within the timeout) is
  an absent daemon: :func:`reach` returns None and the verb works in-process.
- A full listen queue (``EAGAIN``) is a busy daemon: retried until the connect
  timeout, then :class:`DaemonBusy` — never taken for an absent one.
- A daemon whose Welcome names another store than this ``ABCD_HOME`` is not used: stderr
  says so and the verb works in-process on its own store.
- After :func:`served_only` (the typer-free fast path, :mod:`abcd_client.quick`) every
  "work in-process" above raises :class:`NoDaemon` instead — before anything is
  printed — and the fast path hands the command line to typer, which runs the same
  verb from the start.
- A socket whose listener runs as another uid is refused (:class:`StorePathError`),
  before a byte is sent: it is not this user's daemon.
- A daemon's refusal is raised as :class:`RemoteError` with its message, hint, details,
  kind and exit code, so the CLI renders it exactly as an in-process one.
"""

from __future__ import annotations

import os
import time
# The C socket type itself: ``socket.py`` on top of it builds enums and imports
# selectors at import, a cost a CLI pays on every verb for nothing it uses here.
from _socket import AF_UNIX, SOCK_STREAM, socket
TYPE_CHECKING = False  # typing itself is a served verb's millisecond
if TYPE_CHECKING:
    from typing import Callable, TypeVar

    C = TypeVar("C")

from abcd_daemon.errors import AbcdError, DaemonBusy, DaemonUnavailable, ProtocolError, StoreMismatch, StorePathError
from abcd_daemon.paths import abcd_home, socket_path
from abcd_daemon.peer import peer_uid

CONNECT_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 600.0


class NoDaemon(Exception):
    """No daemon will answer this verb (fast path only; never an AbcdError, so no verb
    body renders it as a refusal)."""


_served_only = False


def served_only(on: bool) -> None:
    """While ``on``, in this process, a verb whose daemon does not answer raises
    :class:`NoDaemon` instead of working in-process (:mod:`abcd_client.quick`)."""
    global _served_only
    _served_only = on


def absent() -> None:
    """What a verb gets when no daemon will answer: None (work in-process), or —
    after :func:`served_only` — :class:`NoDaemon`."""
    if _served_only:
        raise NoDaemon
    return None


class RemoteError(AbcdError):
    """A refusal the daemon reported (an ``ErrorReply``'s fields)."""

    def __init__(self, *, kind: str, message: str, hint: str = "", exit_code: int = 1,
                 details=()) -> None:
        super().__init__(message, hint=hint, details=list(details))
        self.kind = kind
        self.exit_code = exit_code


def open_socket(path: str | None = None, timeout: float = CONNECT_TIMEOUT_S) -> tuple[socket, str]:
    """``(socket connected to the daemon's path, that path)``, retrying a full listen
    queue until ``timeout``. Raises DaemonBusy when it stays full, DaemonUnavailable
    when nothing listens."""
    path = path or socket_path()
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        sock = socket(AF_UNIX, SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
            _ours(sock, path)
            return sock, path
        except BlockingIOError:  # EAGAIN: the listen queue is full — busy, not absent
            sock.close()
            if time.monotonic() + delay > deadline:
                raise DaemonBusy(f"the abcd daemon on {path} is too busy to take a connection (its "
                                 f"listen queue stayed full for {timeout:g}s)",
                                 hint="it is working through a burst; run the command again in a "
                                      "moment") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        except OSError as exc:
            sock.close()
            raise _unanswered(path, exc) from None
        except BaseException:
            sock.close()
            raise


def _ours(sock, path: str) -> None:
    """Refuse a socket whose listener runs as another uid: it is not this user's daemon,
    and a query, a session id or a store path must not reach it."""
    uid, me = peer_uid(sock), os.getuid()
    if uid is not None and uid != me:
        raise StorePathError(f"the socket {path} is served by uid {uid}, not by you (uid {me}); refused: "
                             "abcd talks only to your own daemon",
                             hint="stop whatever listens there, or set ABCD_SOCKET to a socket of your own")


def _unanswered(path: str, exc: Exception) -> DaemonUnavailable:
    return DaemonUnavailable(f"no abcd daemon answered on {path} ({exc})", hint="start it with `abcd daemon start`")


def handshaken(path: str | None, timeout: float, expect_home, greet: "Callable[[socket], tuple[C, int, str]]") -> "C":
    """A client of the daemon on ``path``: the socket opened (:func:`open_socket`), then
    ``greet(sock)`` — the codec's Hello and Welcome, returning ``(client, the Welcome's
    pid, its home)`` — then the store checked (:func:`check_store`). A socket that
    connected but gave no Welcome (it closed, timed out, answered garbage) raises
    DaemonUnavailable; a refused Hello the daemon's RemoteError. The socket is closed on
    every error."""
    sock, path = open_socket(path, timeout)
    try:
        client, pid, home = greet(sock)
        sock.settimeout(REPLY_TIMEOUT_S)
        check_store(path, pid, home, expect_home)
    except RemoteError:
        sock.close()
        raise
    except (OSError, ProtocolError) as exc:
        sock.close()
        raise _unanswered(path, exc) from None
    except BaseException:
        sock.close()
        raise
    return client


def same_store(theirs: str, ours) -> bool:
    """True when the daemon's store ``theirs`` is the directory ``ours`` (a daemon that
    does not name its store cannot be told apart, and is taken at its word)."""
    if not theirs:
        return True
    try:
        return os.path.samefile(theirs, ours)
    except OSError:
        return os.path.realpath(theirs) == os.path.realpath(ours)


def check_store(path: str, pid: int, theirs: str, expect_home) -> None:
    """Raise StoreMismatch when the daemon on ``path`` serves ``theirs``, not
    ``expect_home`` (None: any store will do)."""
    if expect_home is not None and not same_store(theirs, expect_home):
        raise StoreMismatch(
            f"the abcd daemon on {path} (pid {pid}) serves the store {theirs}, not "
            f"this ABCD_HOME ({shown(expect_home)})",
            hint="use the same ABCD_HOME as that daemon, or give this store its own daemon on "
                 "its own socket (ABCD_SOCKET)")


def shown(home) -> str:
    """The home as the CLI names it (``Home(...).root``: a ``pathlib.Path``, imported
    only here — a served verb never needs it, and it costs a start-up ~5 ms)."""
    from pathlib import Path

    return os.fspath(Path(home))


def reach(connect: "Callable[..., C]") -> "C | None":
    """``connect(expect_home=<this ABCD_HOME>)`` — a connected client of this store's
    daemon — or None when the verb should work in-process (``ABCD_LOCAL=1``, none
    answers, or the one that answers serves another store: said on stderr). Raises
    DaemonBusy when this store's daemon cannot take a connection."""
    if os.environ.get("ABCD_LOCAL", "") == "1":
        return absent()
    home = abcd_home()  # the string Home.from_env() is made of: same_store reads either
    try:
        return connect(expect_home=home)
    except DaemonUnavailable:
        return absent()
    except StoreMismatch as exc:
        absent()  # the fast path leaves the note to the typer path
        from .output import note

        note(f"abcd: {exc}; working in-process on {shown(home)} instead")
        return None
