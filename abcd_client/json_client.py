"""A daemon client that speaks the wire's JSON form with the standard library only.

For the verbs whose whole cost is start-up (``abcd search``): importing msgspec costs a
CLI process more than the daemon takes to answer. The frames are the wire's own
(:mod:`abcd_daemon.wire.framing`): a 4-byte length, then a JSON object tagged by
``op``; the daemon answers a connection in the format its Hello came in, refusals
included. When to use a daemon at all is :mod:`.dial`'s, as for the msgpack client.

What this module writes of the protocol — an op's name, its reply's op, the request's
field names — is the daemon's :mod:`abcd_daemon.wire.messages`, read again:
``tests/client/test_json_client.py`` checks every op this client names against
``messages.ANSWERS`` and every request it builds against the request Struct's fields
(a misspelt field would be ignored by the daemon, not refused). Replies are decoded
by :func:`.json_text.loads` (numbers kept as written).
"""

from __future__ import annotations

import json

from abcd_daemon.errors import DaemonUnavailable, ProtocolError
from abcd_daemon.wire.framing import LENGTH, MAX_FRAME, PROTOCOL_VERSION, is_json

from . import json_text
from .dial import CONNECT_TIMEOUT_S, RemoteError, handshaken, reach

#: the ops this client sends → the op of the reply that answers each
ANSWER_OPS = {"hello": "welcome", "search": "search-reply"}


class JsonClient:
    """One handshaken connection. :meth:`request` sends a message and returns its reply
    as a dict (raising :class:`~.dial.RemoteError` for a refusal)."""

    def __init__(self, sock) -> None:
        self.sock = sock
        self._buf = b""
        self.welcome: dict = {}

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "JsonClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def request(self, op: str, fields: dict) -> dict:
        """Send ``{"op": op, **fields}``; return the reply. Raises RemoteError for a
        refusal, ProtocolError for a reply that is not the one ``op`` expects."""
        payload = json.dumps({"op": op, **fields}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if len(payload) > MAX_FRAME:
            raise ProtocolError(f"a {len(payload)}-byte message is over the {MAX_FRAME}-byte frame limit")
        self.sock.sendall(LENGTH.pack(len(payload)) + payload)
        reply = self._receive()
        if reply.get("op") == "error":
            raise _refusal(reply)
        if reply.get("op") != ANSWER_OPS[op]:
            raise ProtocolError(f"expected {ANSWER_OPS[op]!r} in answer to {op!r}, got {reply.get('op')!r}")
        return reply

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            data = self.sock.recv(max(n - len(self._buf), 1 << 16))
            if not data:
                raise DaemonUnavailable("the daemon closed the connection before replying",
                                        hint="check its log; the command can be rerun")
            self._buf += data
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _receive(self) -> dict:
        (length,) = LENGTH.unpack(self._read(LENGTH.size))
        if length > MAX_FRAME:
            raise ProtocolError(f"a frame of {length} bytes is over the {MAX_FRAME}-byte limit; refused")
        payload = self._read(length)
        if not is_json(payload):
            raise ProtocolError("the daemon answered a JSON Hello in another format")
        try:
            message = json_text.loads(payload)
        except ValueError:
            raise ProtocolError("the daemon sent a frame that is not JSON") from None
        except RecursionError:
            raise ProtocolError("the daemon sent a frame nested deeper than any message") from None
        if not isinstance(message, dict):
            raise ProtocolError("the daemon sent a frame that is not a message")
        return message


def _refusal(reply: dict) -> RemoteError:
    """An ErrorReply's fields as RemoteError takes them; a field missing or of the wrong
    type (a daemon of another version, or not a daemon) reads as its default."""
    def text(key: str, default: str = "") -> str:
        value = reply.get(key)
        return value if isinstance(value, str) else default

    code = reply.get("exit_code")
    details = reply.get("details")
    return RemoteError(kind=text("kind", "RemoteError"), message=text("message", "the daemon refused, saying no more"),
                       hint=text("hint"), exit_code=code if type(code) is int and 0 < code < 256 else 1,
                       details=[d for d in details if isinstance(d, str)] if isinstance(details, list) else ())


def connect(path: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S, expect_home=None) -> JsonClient:
    """Connect and handshake in JSON. Raises DaemonUnavailable when no daemon answers,
    DaemonBusy when one cannot take the connection, StoreMismatch (given
    ``expect_home``) when it serves another store, RemoteError when it refuses the Hello."""
    def greet(sock):
        client = JsonClient(sock)
        client.welcome = client.request("hello", {"protocol": PROTOCOL_VERSION, "client": "abcd-cli"})
        return client, client.welcome.get("pid", 0), client.welcome.get("home", "")

    return handshaken(path, timeout, expect_home, greet)


def ask(op: str, fields: dict) -> dict | None:
    """The daemon's reply to ``op`` with ``fields``, or None when the verb should work
    in-process (:func:`.dial.reach`). Raises RemoteError for a refusal."""
    client = reach(connect)
    if client is None:
        return None
    with client:
        return client.request(op, fields)
