"""Hostile clients on the daemon's socket, against one running daemon.

Garbage, oversized and truncated frames are each answered with one ``ErrorReply`` that
says which, then the connection is closed; a half-closed client still gets its reply;
slow and silent clients are dropped at the request deadline without pinning anything;
a burst of 200 hooks at once is queued (the listen backlog is the system's maximum),
every one rings, and every payload is taken. After each case the daemon still answers a
real request (:meth:`Served.still_serving`).
"""

from __future__ import annotations

import concurrent.futures
import socket
import struct
import time

import msgspec

from abcd_daemon.server.connection import REQUEST_DEADLINE_S, REQUEST_MAX_FRAME
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

from ..daemon.procs import answers, run_shim, shim_log, wait_for


def _connect(served, timeout: float = 10) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(served.env["ABCD_SOCKET"])
    return s


def _replies(s: socket.socket) -> list:
    """Every frame the daemon sends until it closes the connection."""
    decoder = FrameDecoder()
    out = []
    while chunk := s.recv(65536):
        decoder.feed(chunk)
        while (frame := decoder.next_frame()) is not None:
            out.append(frame)
    return out


def _refusal(served, data: bytes, *, half_close: bool = False) -> str:
    with _connect(served) as s:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        frames = _replies(s)
    [error] = [f for f in frames if isinstance(f, m.ErrorReply)]
    assert error.kind == "ProtocolError"
    return error.message


HELLO = encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION))


def test_a_garbage_frame_is_refused_as_undecodable(served):
    message = _refusal(served, struct.pack(">I", 8) + b"\xc1" * 8)
    assert message == "a frame is not msgpack; refused"
    served.still_serving()


def test_an_oversized_frame_is_refused_on_its_length_before_any_of_it_arrives(served):
    message = _refusal(served, struct.pack(">I", 2**32 - 1))
    assert message == f"a frame of {2**32 - 1} bytes is over the {REQUEST_MAX_FRAME}-byte limit; refused"
    served.still_serving()


def test_a_frame_cut_off_by_a_half_close_is_refused_as_never_finished(served):
    message = _refusal(served, struct.pack(">I", 100) + b"\x00" * 40, half_close=True)
    assert message == "the connection was closed 44 byte(s) into a frame that never finished; refused"
    served.still_serving()


def test_a_request_cut_off_after_the_handshake_is_refused_the_same_way(served):
    request = encode_frame(m.StatusRequest())
    with _connect(served) as s:
        s.sendall(HELLO + request[:-1])
        s.shutdown(socket.SHUT_WR)
        frames = _replies(s)
    assert isinstance(frames[0], m.Welcome)
    assert isinstance(frames[1], m.ErrorReply)
    assert frames[1].message == (f"the connection was closed {len(request) - 1} byte(s) into a "
                                 "frame that never finished; refused")
    served.still_serving()


def test_a_truncated_frame_from_a_client_that_vanished_costs_nothing(served):
    for _ in range(20):
        with _connect(served) as s:
            s.sendall(struct.pack(">I", 1000) + b"\x01" * 10)  # then gone, reading nothing
    served.still_serving()


def test_a_half_closed_client_still_gets_its_reply(served):
    with _connect(served) as s:
        s.sendall(HELLO + encode_frame(m.StatusRequest()))
        s.shutdown(socket.SHUT_WR)  # done talking, still listening
        frames = _replies(s)
    assert isinstance(frames[0], m.Welcome) and frames[0].home
    assert isinstance(frames[1], m.StatusReply) and frames[1].status.pid == served.pid
    served.still_serving()


def test_slowloris_clients_are_dropped_at_the_request_deadline_while_others_are_served(served):
    frame = HELLO
    clients = [_connect(served) for _ in range(10)]
    for s in clients:
        s.setblocking(False)
    dropped = set()
    served_meanwhile = False
    give_up = time.monotonic() + REQUEST_DEADLINE_S * 4
    i = 0
    try:
        while len(dropped) < len(clients) and time.monotonic() < give_up:
            for n, s in enumerate(clients):
                if n in dropped:
                    continue
                try:
                    if s.recv(1) == b"":
                        dropped.add(n)
                        continue
                except BlockingIOError:
                    pass
                except ConnectionError:
                    dropped.add(n)
                    continue
                try:  # one byte of the handshake every half second: never a whole frame
                    s.send(frame[i % (len(frame) - 1) : i % (len(frame) - 1) + 1])
                except (BlockingIOError, ConnectionError):
                    dropped.add(n)
            if not served_meanwhile:
                served_meanwhile = answers(served.env)  # not pinned by ten dribblers
            i += 1
            time.sleep(0.5)
    finally:
        for s in clients:
            s.close()
    assert served_meanwhile
    assert len(dropped) == len(clients), "a slow client was never dropped"
    served.still_serving()


def test_a_burst_of_200_hooks_at_once_all_ring_and_every_payload_is_taken(served, saturates_the_machine):
    before = len(shim_log(served.env))

    def hook(n):
        return run_shim("session-start", {"session_id": f"burst-{n:03d}", "cwd": str(served.repo)},
                        served.env, timeout=120).returncode

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(hook, range(200)))
    assert codes == [0] * 200
    taken = [row.split(" ", 2)[2] for row in shim_log(served.env)[before:]]
    assert len(taken) == 200
    assert set(taken) == {"spooled+rang"}  # none busy, none "daemon-absent"
    new = served.home / "spool" / "new"
    wait_for(lambda: not list(new.glob("*.json")), 120, what="every burst payload to be taken")
    assert not [p for p in (served.home / "spool" / "failed").glob("*.reason")
                if "burst-" in p.read_text()]
    served.still_serving()


def test_a_burst_of_200_raw_connections_is_served_and_a_request_after_it_answers(served, saturates_the_machine):
    def ring(_):
        with _connect(served, timeout=30) as s:
            s.sendall(HELLO)
            s.shutdown(socket.SHUT_WR)
            return type(_replies(s)[0]).__name__

    with concurrent.futures.ThreadPoolExecutor(max_workers=200) as pool:
        kinds = list(pool.map(ring, range(200)))
    assert kinds == ["Welcome"] * 200
    served.still_serving()


def test_a_nested_garbage_hello_is_refused_with_a_reason(served):
    payload = (b"\x82" + msgspec.msgpack.encode("op") + msgspec.msgpack.encode("hello")
               + msgspec.msgpack.encode("protocol") + b"\x91" * 10_000 + b"\x01")
    message = _refusal(served, struct.pack(">I", len(payload)) + payload)
    assert message == "a frame nests deeper than any protocol message; refused"
    served.still_serving()


def test_after_all_of_it_a_real_transcript_is_captured(served):
    served.captures_a_real_transcript("afeed003", "socket done")
    served.still_serving()
