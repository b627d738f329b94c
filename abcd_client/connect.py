"""Talking to the daemon: a small synchronous client over the Unix socket.

``daemon()`` returns a connected, handshaken :class:`DaemonClient`, or None when no daemon
answers (no socket, connection refused, no Welcome within the timeout) — the caller then
runs the same core in-process. ``ABCD_LOCAL=1`` forces in-process. An ``ErrorReply`` is
raised as :class:`RemoteError`, carrying the daemon's message, hint and exit code, so the
CLI renders a daemon-side refusal exactly as an in-process one.
"""

from __future__ import annotations

import os
import socket

from abcd_daemon.errors import AbcdError, DaemonUnavailable, ProtocolError
from abcd_daemon.paths import socket_path
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

CONNECT_TIMEOUT_S = 2.0
REPLY_TIMEOUT_S = 600.0


class RemoteError(AbcdError):
    """A refusal the daemon reported."""

    def __init__(self, reply: m.ErrorReply) -> None:
        super().__init__(reply.message, hint=reply.hint)
        self.kind = reply.kind
        self.exit_code = reply.exit_code


class DaemonClient:
    def __init__(self, sock: socket.socket, welcome: m.Welcome) -> None:
        self.sock = sock
        self.welcome = welcome
        self.decoder = FrameDecoder(max_frame=m.MAX_FRAME)

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
        """Send ``request``; return its (head) reply. Raises RemoteError on a refusal."""
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

    def messages(self):
        """Yield the messages of a progress stream until a non-Progress message."""
        while True:
            message = self._receive()
            yield message
            if not isinstance(message, m.Progress):
                return


def connect(path: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S) -> DaemonClient:
    """Connect and handshake. Raises DaemonUnavailable when no daemon answers."""
    path = path or socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION, client="abcd-cli")))
        client = DaemonClient(sock, welcome=None)  # type: ignore[arg-type]
        welcome = client._receive()
        if not isinstance(welcome, m.Welcome):
            raise ProtocolError("the daemon did not answer the handshake")
        client.welcome = welcome
        sock.settimeout(REPLY_TIMEOUT_S)
        return client
    except RemoteError:
        sock.close()
        raise
    except (OSError, ProtocolError) as exc:
        sock.close()
        raise DaemonUnavailable(f"no abcd daemon answered on {path} ({exc})",
                                hint="start it with `abcd daemon start`") from None


def daemon() -> DaemonClient | None:
    """A connected client, or None when the CLI should work in-process."""
    if os.environ.get("ABCD_LOCAL", "") == "1":
        return None
    try:
        return connect()
    except DaemonUnavailable:
        return None


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
