"""The socket protocol answers a request it cannot take with an error frame that says
what is wrong and which ops exist — and keeps serving the same connection."""

from __future__ import annotations

import socket
import struct

import msgspec
import pytest

from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

from .procs import DaemonProc, env_for


class Raw:
    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(15)
        self.sock.connect(path)
        self.decoder = FrameDecoder(max_frame=m.MAX_FRAME)

    def send(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">I", len(payload)) + payload)

    def receive(self):
        while (message := self.decoder.next_frame()) is None:
            data = self.sock.recv(65536)
            assert data, "the daemon closed the connection"
            self.decoder.feed(data)
        return message


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    base = tmp_path_factory.mktemp("connection")
    env = env_for(base)
    daemon = DaemonProc(env, base / "d.log").wait_ready()
    yield env
    assert daemon.stop() == 0, daemon.read_log()


def opened(env) -> Raw:
    raw = Raw(env["ABCD_SOCKET"])
    raw.send(msgspec.msgpack.encode(m.Hello(protocol=m.PROTOCOL_VERSION)))
    assert isinstance(raw.receive(), m.Welcome)
    return raw


@pytest.mark.parametrize("payload, expected", [
    ({"op": "frobnicate"}, "unknown op 'frobnicate'; refused"),
    ({"op": "list", "root_sha": 5},
     "a 'list' message is malformed (Expected `str`, got `int` - at `$.root_sha`); refused"),
    ({"op": "show", "root_sha": "a" * 40}, "a 'show' message is malformed (Object missing required field `key`)"),
    ({"root_sha": "x"}, "a message carries no 'op' saying what it asks"),
    ({"op": "welcome", "protocol": 1, "daemon_version": "x", "pid": 1},
     "Welcome is not a request this daemon answers"),
], ids=["unknown-op", "wrong-type", "missing-field", "no-op", "a-reply-as-request"])
def test_a_request_it_cannot_take_gets_an_error_frame_and_the_connection_keeps_serving(
        served, payload, expected):
    raw = opened(served)
    raw.send(msgspec.msgpack.encode(payload))
    reply = raw.receive()
    assert isinstance(reply, m.ErrorReply) and reply.kind == "ProtocolError", reply
    assert expected in reply.message
    assert "status" in reply.hint and "reconstruct" in reply.hint and "retry" in reply.hint
    assert reply.exit_code == 2
    raw.sock.sendall(encode_frame(m.StatusRequest()))
    assert isinstance(raw.receive(), m.StatusReply)  # same connection, still in step
    raw.sock.close()


def test_a_first_frame_that_is_no_message_is_answered_then_closed(served):
    raw = Raw(served["ABCD_SOCKET"])
    raw.send(msgspec.msgpack.encode({"op": "hullo", "protocol": 1}))
    reply = raw.receive()
    assert isinstance(reply, m.ErrorReply) and "unknown op 'hullo'" in reply.message
    assert raw.sock.recv(10) == b""


def test_a_client_of_another_protocol_is_told_how_to_restart_with_verbs_that_exist(served):
    raw = Raw(served["ABCD_SOCKET"])
    raw.send(msgspec.msgpack.encode(m.Hello(protocol=m.PROTOCOL_VERSION + 1)))
    reply = raw.receive()
    assert isinstance(reply, m.ErrorReply)
    assert "`abcd daemon stop`, then `abcd daemon start`" in reply.hint


class JsonRaw:
    """A client with no msgpack library: stdlib json and struct, nothing of abcd's."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(15)
        self.sock.connect(path)
        self.buf = b""

    def send(self, obj) -> None:
        import json

        payload = json.dumps(obj).encode()
        self.sock.sendall(struct.pack(">I", len(payload)) + payload)

    def receive(self) -> dict:
        import json

        while len(self.buf) < 4 or len(self.buf) < 4 + struct.unpack(">I", self.buf[:4])[0]:
            data = self.sock.recv(65536)
            assert data, "the daemon closed the connection"
            self.buf += data
        size = struct.unpack(">I", self.buf[:4])[0]
        payload, self.buf = self.buf[4:4 + size], self.buf[4 + size:]
        assert payload[:1] == b"{", payload[:20]  # answered in JSON, not msgpack
        return json.loads(payload)


def test_a_connection_opened_in_json_is_answered_in_json_refusals_included(served):
    raw = JsonRaw(served["ABCD_SOCKET"])
    raw.send({"op": "hello", "protocol": m.PROTOCOL_VERSION, "client": "script"})
    welcome = raw.receive()
    assert welcome["op"] == "welcome" and welcome["protocol"] == m.PROTOCOL_VERSION
    raw.send({"op": "frobnicate"})
    refusal = raw.receive()
    assert refusal["op"] == "error" and "unknown op 'frobnicate'" in refusal["message"]
    raw.send({"op": "status"})
    status = raw.receive()
    assert status["op"] == "status-reply" and status["status"]["pid"] == welcome["pid"]
    raw.sock.close()
    # the same daemon still answers a msgpack client on another connection
    assert isinstance(opened(served), Raw)
