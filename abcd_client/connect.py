"""Talking to the daemon: a small synchronous msgpack client over the Unix socket.

``daemon()`` returns a connected, handshaken :class:`DaemonClient`, or None when the
verb should work in-process; when that is, and how a busy daemon, a daemon of another
store and the typer-free fast path's :class:`NoDaemon` are told apart, is
:mod:`.dial`'s (shared with the JSON client, :mod:`.json_client`). An ``ErrorReply`` is
raised as :class:`RemoteError`, carrying the daemon's message, hint and exit code, so
the CLI renders a daemon-side refusal exactly as an in-process one.
"""

from __future__ import annotations

from typing import Union

from abcd_daemon.errors import DaemonUnavailable, ProtocolError
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

from .dial import CONNECT_TIMEOUT_S, NoDaemon, RemoteError, absent, handshaken, reach, served_only

__all__ = ["DaemonClient", "NoDaemon", "RemoteError", "remote_error", "ask", "ask_into", "ask_with_progress", "connect",
           "daemon", "running", "served_only"]


def remote_error(reply: m.ErrorReply) -> RemoteError:
    """The refusal ``reply`` as the exception the CLI renders."""
    return RemoteError(kind=reply.kind, message=reply.message, hint=reply.hint, exit_code=reply.exit_code,
                       details=reply.details)


class DaemonClient:
    def __init__(self, sock, welcome: m.Welcome) -> None:
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
                    raise remote_error(message)
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


def connect(path: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S,
            expect_home=None) -> DaemonClient:
    """Connect and handshake. Raises DaemonUnavailable when no daemon answers, DaemonBusy
    when one is there but cannot take the connection, and — given ``expect_home`` —
    StoreMismatch when the daemon serves another store."""
    def greet(sock):
        sock.sendall(encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION, client="abcd-cli")))
        client = DaemonClient(sock, welcome=None)  # type: ignore[arg-type]
        welcome = client._receive()
        if not isinstance(welcome, m.Welcome):
            raise ProtocolError("the daemon did not answer the handshake")
        client.welcome = welcome
        return client, welcome.pid, welcome.home

    return handshaken(path, timeout, expect_home, greet)


def daemon() -> DaemonClient | None:
    """A connected client of this store's daemon, or None when the CLI should work
    in-process (:func:`.dial.reach`). Raises DaemonBusy when this store's daemon cannot
    take a connection."""
    return reach(connect)


def running(home):
    """A connected client of ``home``'s daemon, or None when none answers (ignoring
    ``ABCD_LOCAL``: it asks whether one runs). Raises AbcdError for a daemon that is busy
    or serves another store on this socket."""
    try:
        return connect(timeout=2.0, expect_home=home.root)
    except DaemonUnavailable:
        return absent()


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
