"""Talking to the daemon: a small synchronous client over the Unix socket.

``daemon()`` returns a connected, handshaken :class:`DaemonClient`, or None when no daemon
answers (no socket, connection refused, no Welcome within the timeout) — the caller then
runs the same core in-process. ``ABCD_LOCAL=1`` forces in-process. A daemon that
answers for another store (the Welcome's ``home`` is not this ``ABCD_HOME``) is not
used: stderr says so and the caller works in-process on its own store. A full listen
queue (``EAGAIN``) is a busy daemon: retried until the connect timeout, then
:class:`DaemonBusy` — never taken for an absent one. An ``ErrorReply`` is
raised as :class:`RemoteError`, carrying the daemon's message, hint and exit code, so the
CLI renders a daemon-side refusal exactly as an in-process one.

The typer-free fast path (:mod:`abcd_client.quick`) serves only what a daemon answers:
it turns :func:`served_only` on, and then every place that would otherwise fall back to
in-process work (:func:`daemon`, :func:`running`) raises :class:`NoDaemon` instead —
before anything is printed — and the fast path hands the command line to typer, which
runs the same verb from the start.
"""

from __future__ import annotations

import os
import time
# The C socket type itself: ``socket.py`` on top of it builds enums and imports
# selectors at import, a cost a CLI pays on every verb for nothing it uses here.
from _socket import AF_UNIX, SOCK_STREAM, socket
from typing import Union

from abcd_daemon.errors import AbcdError, DaemonBusy, DaemonUnavailable, ProtocolError, StoreMismatch
from abcd_daemon.paths import abcd_home, socket_path
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

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


def _absent() -> None:
    """What a verb gets when no daemon will answer: None (work in-process), or —
    after :func:`served_only` — :class:`NoDaemon`."""
    if _served_only:
        raise NoDaemon
    return None


class RemoteError(AbcdError):
    """A refusal the daemon reported."""

    def __init__(self, reply: m.ErrorReply) -> None:
        super().__init__(reply.message, hint=reply.hint, details=reply.details)
        self.kind = reply.kind
        self.exit_code = reply.exit_code


class DaemonClient:
    def __init__(self, sock: socket, welcome: m.Welcome) -> None:
        self.sock = sock
        self.welcome = welcome
        self.decoder = FrameDecoder(max_frame=m.MAX_FRAME, type=Union[m.Welcome, m.ErrorReply])

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "DaemonClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _receive(self):
        while True:
            message = self.decoder.next_frame()
            if message is not None:
                if isinstance(message, m.ErrorReply):
                    raise RemoteError(message)
                return message
            data = self.sock.recv(1 << 20)
            if not data:
                raise DaemonUnavailable("the daemon closed the connection before replying",
                                        hint="check its log; the command can be rerun")
            self.decoder.feed(data)

    def request(self, request):
        """Send ``request``; return its (head) reply. Raises RemoteError on a refusal.
        Only the replies that can answer it (:data:`~abcd_daemon.wire.messages.ANSWERS`)
        are decoded; any other reply is a protocol error."""
        answers = m.ANSWERS.get(type(request))
        self.decoder.expect(Union[(m.ErrorReply, *answers)] if answers else m.Message)
        self.sock.sendall(encode_frame(request))
        return self._receive()

    def body(self) -> bytes:
        """Collect the ``Chunk`` frames of a streaming reply until ``End``."""
        parts = []
        while True:
            message = self._receive()
            if isinstance(message, m.End):
                return b"".join(parts)
            if not isinstance(message, m.Chunk):
                raise ProtocolError(f"expected a chunk, got {type(message).__name__}")
            parts.append(message.data)

    def chunks(self):
        """Yield the data of each ``Chunk`` frame of a streaming reply until ``End``."""
        while True:
            message = self._receive()
            if isinstance(message, m.End):
                return
            if not isinstance(message, m.Chunk):
                raise ProtocolError(f"expected a chunk, got {type(message).__name__}")
            yield message.data

    def until(self, last: type):
        """Yield every message of a stream up to and including the first ``last``."""
        while True:
            message = self._receive()
            yield message
            if isinstance(message, last):
                return

    def messages(self):
        """Yield the messages of a progress stream until a non-Progress message."""
        while True:
            message = self._receive()
            yield message
            if not isinstance(message, m.Progress):
                return


def _connect_socket(path: str, timeout: float) -> socket:
    """A socket connected to ``path``, retrying a full listen queue until ``timeout``.
    Raises DaemonBusy when it stays full, OSError when nothing listens."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        sock = socket(AF_UNIX, SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
            return sock
        except BlockingIOError:  # EAGAIN: the listen queue is full — busy, not absent
            sock.close()
            if time.monotonic() + delay > deadline:
                raise DaemonBusy(f"the abcd daemon on {path} is too busy to take a connection (its "
                                 f"listen queue stayed full for {timeout:g}s)",
                                 hint="it is working through a burst; run the command again in a "
                                      "moment") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        except BaseException:
            sock.close()
            raise


def same_store(theirs: str, ours) -> bool:
    """True when the daemon's store ``theirs`` is the directory ``ours`` (a daemon that
    does not name its store cannot be told apart, and is taken at its word)."""
    if not theirs:
        return True
    try:
        return os.path.samefile(theirs, ours)
    except OSError:
        return os.path.realpath(theirs) == os.path.realpath(ours)


def connect(path: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S,
            expect_home=None) -> DaemonClient:
    """Connect and handshake. Raises DaemonUnavailable when no daemon answers, DaemonBusy
    when one is there but cannot take the connection, and — given ``expect_home`` —
    StoreMismatch when the daemon serves another store."""
    path = path or socket_path()
    try:
        sock = _connect_socket(path, timeout)
    except OSError as exc:
        raise DaemonUnavailable(f"no abcd daemon answered on {path} ({exc})",
                                hint="start it with `abcd daemon start`") from None
    try:
        sock.sendall(encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION, client="abcd-cli")))
        client = DaemonClient(sock, welcome=None)  # type: ignore[arg-type]
        welcome = client._receive()
        if not isinstance(welcome, m.Welcome):
            raise ProtocolError("the daemon did not answer the handshake")
        client.welcome = welcome
        sock.settimeout(REPLY_TIMEOUT_S)
    except RemoteError:
        sock.close()
        raise
    except (OSError, ProtocolError) as exc:
        sock.close()
        raise DaemonUnavailable(f"no abcd daemon answered on {path} ({exc})",
                                hint="start it with `abcd daemon start`") from None
    if expect_home is not None and not same_store(welcome.home, expect_home):
        sock.close()
        raise StoreMismatch(
            f"the abcd daemon on {path} (pid {welcome.pid}) serves the store {welcome.home}, not "
            f"this ABCD_HOME ({_shown(expect_home)})",
            hint="use the same ABCD_HOME as that daemon, or give this store its own daemon on "
                 "its own socket (ABCD_SOCKET)")
    return client


def _shown(home) -> str:
    """The home as the CLI names it (``Home(...).root``: a ``pathlib.Path``, imported
    only here — a served verb never needs it, and it costs a start-up ~5 ms)."""
    from pathlib import Path

    return os.fspath(Path(home))


def daemon() -> DaemonClient | None:
    """A connected client of this store's daemon, or None when the CLI should work
    in-process (none answers, or the one that answers serves another store — said on
    stderr). Raises DaemonBusy when this store's daemon cannot take a connection."""
    if os.environ.get("ABCD_LOCAL", "") == "1":
        return _absent()
    home = abcd_home()  # the string Home.from_env() is made of: same_store reads either
    try:
        return connect(expect_home=home)
    except DaemonUnavailable:
        return _absent()
    except StoreMismatch as exc:
        _absent()  # the fast path leaves the note to the typer path
        from .output import note

        note(f"abcd: {exc}; working in-process on {_shown(home)} instead")
        return None


def running(home):
    """A connected client of ``home``'s daemon, or None when none answers (ignoring
    ``ABCD_LOCAL``: it asks whether one runs). Raises AbcdError for a daemon that is busy
    or serves another store on this socket."""
    try:
        return connect(timeout=2.0, expect_home=home.root)
    except DaemonUnavailable:
        return _absent()


def ask(request, *, stream: bool = False):
    """Send ``request`` to the daemon if one answers. Returns None when none does (the
    caller then runs the core in-process), else the reply — or (reply, body) when
    ``stream``. Raises RemoteError for a refusal the daemon reported."""
    client = daemon()
    if client is None:
        return None
    with client:
        reply = client.request(request)
        return (reply, client.body()) if stream else reply


def ask_into(request, write, on_reply=None):
    """Like :func:`ask` with ``stream``, but the reply's body is handed to ``write``
    chunk by chunk as it arrives (never held whole); ``on_reply(reply)`` runs first.
    Returns the reply, or None when no daemon answers."""
    client = daemon()
    if client is None:
        return None
    with client:
        reply = client.request(request)
        if on_reply is not None:
            on_reply(reply)
        for data in client.chunks():
            write(data)
        return reply


def ask_with_progress(request, on_progress=None):
    """Like :func:`ask` for a request whose reply streams ``Progress`` frames first
    (ingest, drain): each is handed to ``on_progress(files_done, files_total,
    bytes_done, bytes_total)``; returns the final reply, or None when no daemon answers."""
    client = daemon()
    if client is None:
        return None
    with client:
        message = client.request(request)
        while isinstance(message, m.Progress):
            if on_progress is not None:
                on_progress(message.files_done, message.files_total, message.bytes_done,
                            message.bytes_total)
            message = client._receive()
        return message
