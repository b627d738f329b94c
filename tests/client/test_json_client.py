"""The stdlib JSON client names the wire's ops, replies and fields exactly as
:mod:`abcd_daemon.wire.messages` defines them, and a server that answers wrongly — in
msgpack, with a frame over the limit, with another reply, by hanging up — is a clear
error, never a traceback or a hang. (Against the real daemon: test_quick_served.py.)"""

from __future__ import annotations

import json
import socket
import struct
import threading

import msgspec
import pytest

from abcd_client import json_client, json_text
from abcd_client.dial import RemoteError
from abcd_daemon.errors import DaemonUnavailable, ProtocolError
from abcd_daemon.wire import framing, messages as m

_BY_TAG = {t.__struct_config__.tag: t for t in m.Message.__args__}


def test_every_op_the_json_client_names_is_the_wire_s_with_the_reply_that_answers_it():
    for op, answer in json_client.ANSWER_OPS.items():
        request = _BY_TAG[op]
        if request is m.Hello:
            assert answer == m.Welcome.__struct_config__.tag
        else:
            assert answer in {t.__struct_config__.tag for t in m.ANSWERS[request]}
    # an ErrorReply's every field reaches the RemoteError the CLI renders
    reply = m.ErrorReply(kind="AmbiguousId", message="two match", hint="more of the id", exit_code=2, details=["a"])
    err = json_client._refusal(json_text.loads(msgspec.json.encode(reply)))
    assert (err.kind, err.message, err.hint, err.exit_code, err.details) == ("AmbiguousId", "two match",
                                                                            "more of the id", 2, ("a",))


def test_the_search_verb_sends_exactly_the_fields_of_search_request(monkeypatch, tmp_path):
    from abcd_client.commands import search

    sent = []

    def ask(op, fields):
        sent.append((op, fields))
        return {"op": "search-reply", "hits": []}

    monkeypatch.setattr(json_client, "ask", ask)
    monkeypatch.setenv("ABCD_HOME", str(tmp_path))
    search.search("a query", all_repos=True, session="abc", agent_type="Explore", role="tool", tool="Bash",
                  since="2026-01-02", until="2026-02-03T04:05", limit=7, as_json=True)
    (op, fields), = sent
    assert op == "search" and set(fields) == set(m.SearchRequest.__struct_fields__)
    decoded = msgspec.json.decode(json.dumps({"op": op, **fields}), type=m.Request)
    assert decoded == m.SearchRequest(query="a query", roots=[], session="abc", agent_type="Explore", role="tool",
                                      tool="Bash", since_ns=1767312000 * 10**9, until_ns=1770091500 * 10**9,
                                      limit=7)


class FakeDaemon:
    """A real Unix socket whose one connection is answered by ``script(conn, hello)``."""

    def __init__(self, path: str, script) -> None:
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(path)
        self.listener.listen(1)
        self.script = script
        self.received: list[dict] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _read_frame(self, conn) -> dict:
        (n,) = struct.unpack(">I", conn.recv(4, socket.MSG_WAITALL))
        message = json.loads(conn.recv(n, socket.MSG_WAITALL))
        self.received.append(message)
        return message

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            self.script(self, conn, self._read_frame(conn))

    def close(self) -> None:
        self.thread.join(5)
        self.listener.close()


def _frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def _welcome(fake, conn) -> None:
    conn.sendall(_frame(json.dumps({"op": "welcome", "protocol": framing.PROTOCOL_VERSION,
                                    "daemon_version": "t", "pid": 1}).encode()))


@pytest.fixture
def fake(tmp_path):
    made = []

    def start(script):
        made.append(FakeDaemon(str(tmp_path / "sock"), script))
        return str(tmp_path / "sock")

    yield start
    for f in made:
        f.close()


def test_the_hello_is_the_wire_s_hello_and_a_welcome_opens_the_connection(fake):
    def script(daemon, conn, hello):
        _welcome(daemon, conn)
        daemon._read_frame(conn)
        conn.sendall(_frame(b'{"op": "search-reply", "hits": [{"score": -1e-7, "turn": 3}]}'))

    path = fake(script)
    with json_client.connect(path) as client:
        reply = client.request("search", {"query": "x"})
    assert msgspec.json.decode(json.dumps(client.welcome), type=m.Welcome).pid == 1
    assert reply["hits"][0]["score"].text == "-1e-7" and reply["hits"][0]["turn"] == 3


@pytest.mark.parametrize("answer, says", [
    (_frame(msgspec.msgpack.encode({"op": "welcome"})), "in another format"),
    (struct.pack(">I", framing.MAX_FRAME + 1), "over the"),
    (_frame(b"{not json"), "not JSON"),
    (_frame(b"[1, 2]"), "in another format"),  # a JSON payload opens with "{": this is not one
    (_frame(b'{"op": "status-reply"}'), "expected 'welcome'"),
    (b"\x00\x00", "closed the connection"),
    (_frame(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"), "nested deeper"),
])
def test_a_handshake_answered_wrongly_is_no_daemon_with_the_reason(fake, answer, says):
    path = fake(lambda daemon, conn, hello: conn.sendall(answer))
    with pytest.raises(DaemonUnavailable, match=says):
        json_client.connect(path)


def test_a_reply_that_does_not_answer_the_request_is_a_protocol_error(fake):
    def script(daemon, conn, hello):
        _welcome(daemon, conn)
        daemon._read_frame(conn)
        conn.sendall(_frame(b'{"op": "usage-reply", "report": {}}'))

    with json_client.connect(fake(script)) as client:
        with pytest.raises(ProtocolError, match="expected 'search-reply' in answer to 'search', got 'usage-reply'"):
            client.request("search", {"query": "x"})


def test_a_refusal_is_raised_with_the_daemon_s_message_hint_details_and_exit_code(fake):
    def script(daemon, conn, hello):
        _welcome(daemon, conn)
        daemon._read_frame(conn)
        conn.sendall(_frame(json.dumps({"op": "error", "kind": "AmbiguousId", "message": "two sessions match",
                                        "hint": "give more of the id", "exit_code": 2,
                                        "details": ["a1", "a2"]}).encode()))

    with json_client.connect(fake(script)) as client:
        with pytest.raises(RemoteError) as caught:
            client.request("search", {"query": "x"})
    err = caught.value
    assert (err.kind, err.message, err.hint, err.exit_code, err.details) == (
        "AmbiguousId", "two sessions match", "give more of the id", 2, ("a1", "a2"))


@pytest.mark.parametrize("reply", [{"op": "error"}, {"op": "error", "message": 7, "exit_code": "two", "details": "x"},
                                   {"op": "error", "message": "no", "exit_code": 99999, "details": [1, "kept"]}])
def test_a_malformed_refusal_is_still_a_refusal_with_defaults_never_a_traceback(fake, reply):
    def script(daemon, conn, hello):
        _welcome(daemon, conn)
        daemon._read_frame(conn)
        conn.sendall(_frame(json.dumps(reply).encode()))

    with json_client.connect(fake(script)) as client:
        with pytest.raises(RemoteError) as caught:
            client.request("search", {"query": "x"})
    err = caught.value
    assert err.exit_code == 1 and isinstance(err.message, str) and err.message
    assert err.details == (("kept",) if isinstance(reply.get("details"), list) else ())


def test_a_request_over_the_frame_limit_is_refused_before_it_is_sent(fake):
    def script(daemon, conn, hello):
        _welcome(daemon, conn)

    with json_client.connect(fake(script)) as client:
        with pytest.raises(ProtocolError, match="over the"):
            client.request("search", {"query": "x" * framing.MAX_FRAME})


def test_nothing_listening_is_no_daemon(tmp_path):
    with pytest.raises(DaemonUnavailable, match="no abcd daemon answered"):
        json_client.connect(str(tmp_path / "nothing-here"))
