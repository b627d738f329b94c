"""Hostile local input, through the REAL path: shim → spool → one running daemon.

Every case hands a payload to ``hooks/abcd-hook`` (which must exit 0 with an empty
stdout), then watches where the daemon puts it: ``spool/failed/<id>.json`` with a
``.reason`` a user can read, or — where the design accepts the input — a stored,
redacted record. After every case the same daemon must still answer
``abcd daemon status --json`` and its peak resident set (``VmHWM`` in
``/proc/<pid>/status``, the high-water mark since it started, so "throughout" is
checked, not sampled) must stay under :data:`~.served.RSS_BOUND` (its reasoning is in
:mod:`.served`). Spool directories and entries are in :mod:`.test_hostile_spools`, the
socket protocol in :mod:`.test_hostile_socket`.

One daemon serves the whole module, in file order: the cases accumulate in one process,
which is the point (a daemon that survives one hostile input but leaks or wedges on the
fifth would pass per-test daemons).
"""

from __future__ import annotations

import json
import os
import socket
import struct
from pathlib import Path

import pytest

from abcd_daemon.config import Config
from abcd_daemon.limits import PAYLOAD_CAP

from ..daemon.procs import run_shim, wait_for
from .served import GHP, RSS_BOUND, SESSION, line

# --------------------------------------------------------------------------- transcripts


def test_a_transcript_path_naming_dev_zero_is_refused_as_not_a_regular_file(served):
    reason = served.refused("session-end", served.session_end("/dev/zero"))
    assert "'<transcript_path, 9 characters>' is not a readable regular file" in reason
    assert "/dev/zero" not in reason  # a reason names the field, never the payload's value
    served.still_serving()


def test_a_transcript_that_is_a_fifo_is_refused_without_blocking_intake(served):
    fifo = served.files / "session.jsonl"
    os.mkfifo(fifo)  # nobody ever writes to it: a blocking open would hang intake
    reason = served.refused("session-end", served.session_end(fifo))
    assert "is not a readable regular file" in reason
    served.still_serving()


def test_a_transcript_that_is_a_symlink_to_another_users_file_is_refused(served):
    if os.geteuid() == 0:
        target = served.files / "nobodys.jsonl"
        target.write_bytes(line("not yours") + b"\n")
        os.chown(target, 65534, 65534)
        os.chmod(target, 0o600)
    else:
        target = Path("/etc/passwd")  # root's
    link = served.files / "agent-a1b2c3d4.jsonl"
    link.symlink_to(target)
    reason = served.refused("subagent-stop", served.subagent_stop("a1b2c3d4", link))
    assert "a symlink or non-regular file is refused" in reason
    served.still_serving()


def test_a_ten_gigabyte_sparse_transcript_is_refused_whole_without_being_read(served):
    sparse = served.files / "sparse.jsonl"
    with open(sparse, "wb") as f:
        f.truncate(10 * 10**9)
    reason = served.refused("session-end", served.session_end(sparse))
    cap = Config().max_transcript_bytes
    assert f"over the {cap}-byte transcript cap (max_transcript_bytes); refused whole, not truncated" in reason
    served.still_serving()


def test_a_200_megabyte_line_over_the_line_cap_is_refused_whole_in_flat_memory(served):
    big = served.files / "one-line.jsonl"
    chunk = b"a" * (1 << 20)
    with open(big, "wb") as f:
        f.write(b'{"type":"user","message":{"content":"')
        for _ in range(200):
            f.write(chunk)
        f.write(b'"}}\n')
    try:
        reason = served.refused("session-end", served.session_end(big))
    finally:
        big.unlink()
    assert f"over the {served.line_cap}-byte line cap (max_line_bytes); refused whole" in reason
    _, peak = served.rss()
    assert peak < 200 * 10**6  # streamed, never held: holding it would take 200 MB at least
    served.still_serving()


def test_a_readable_file_that_is_not_a_transcript_is_refused_not_stored(served):
    """Stands in for /etc/shadow as root reads it (a test must not copy real password
    hashes into a store): a regular, readable file at an arbitrary path that is no
    JSONL transcript — not one line of it is a JSON object."""
    shadow = served.transcript("shadow", (
        b"root:$6$Zq1xWm0v$K3jP9yT2bQ8sLr4nV6cX1zA7dF5gH0jK2lM9nB3vC6xZ8aS1dF4gH7jK0lP2o"
        b"I5uY8tR3eW6qA9sD1fG4hJ7k:19000:0:99999:7:::\n"
        b"daemon:*:19000:0:99999:7:::\n"))
    kind, reason = served.outcome(served.hand_over("session-end", served.session_end(shadow)))
    assert kind == "failed", ("intake staged it: the drain then stores the file as a record, "
                              "password hash and all")
    assert "the payload's transcript is not a JSONL transcript" in reason
    assert str(shadow) not in reason
    served.still_serving()


def test_a_payload_naming_etc_shadow_is_refused_with_a_reason(served):
    if os.access("/etc/shadow", os.R_OK):
        pytest.skip("/etc/shadow is readable by this user (root): the readable case is pinned "
                    "by the stand-in test above, since a test must not copy real password "
                    "hashes into a store")
    reason = served.refused("session-end", served.session_end("/etc/shadow"))
    assert "'<transcript_path, 11 characters>' could not be opened" in reason
    served.still_serving()


# --------------------------------------------------------------------------- payloads


@pytest.mark.parametrize("fields, expected", [
    ({"session_id": "../../etc/passwd"}, "session_id <session_id, 16 characters> is not a usable id"),
    ({"session_id": ".."}, "session_id <session_id, 2 characters> is not a usable id"),
    ({"session_id": "a/b"}, "session_id <session_id, 3 characters> is not a usable id"),
    ({"session_id": "x" * 129}, "is not a usable id"),
    ({"session_id": SESSION, "agent_id": "../../../tmp/evil"}, "no usable agent_id"),
    ({"session_id": SESSION, "agent_id": ".hidden"}, "no usable agent_id"),
], ids=["climbing-session", "dotdot-session", "slash-session", "long-session",
        "climbing-agent", "dot-agent"])
def test_ids_with_path_traversal_are_refused_and_name_no_file(served, fields, expected):
    target = served.transcript("traversal.jsonl", line("hello") + b"\n")
    payload = {**served.subagent_stop("a0000001", target), **fields}
    reason = served.refused("subagent-stop", payload)
    assert expected in reason
    names = [n for _, dirs, files in os.walk(served.home) for n in dirs + files]
    assert not [n for n in names if "passwd" in n or "evil" in n or n in ("..", ".hidden")]
    served.still_serving()


def test_a_json_nesting_bomb_payload_is_refused_with_a_reason(served):
    bomb = b'{"session_id":"%s","a":' % SESSION.encode() + b"[" * 200_000 + b"]" * 200_000 + b"}"
    assert len(bomb) < PAYLOAD_CAP
    reason = served.refused("session-end", bomb)
    assert "nests deeper" in reason
    served.still_serving()


def test_a_payload_one_byte_over_a_mebibyte_is_refused_and_the_shim_says_so(served):
    pad = PAYLOAD_CAP + 1 - len(b'{"session_id":"s","pad":""}')
    over = b'{"session_id":"s","pad":"' + b"x" * pad + b'"}'
    assert len(over) == PAYLOAD_CAP + 1
    reason = served.refused("session-end", over)
    assert "over the 1 MiB cap" in reason
    assert f"over the {PAYLOAD_CAP}-byte cap" in served.last_stderr
    served.still_serving()


def test_a_payload_of_exactly_a_mebibyte_is_taken_and_its_transcript_stored(served):
    transcript = served.transcript("exact.jsonl", line("exactly at the cap") + b"\n")
    payload = served.session_end(transcript, session="exact-cap-session")
    raw = json.dumps({**payload, "pad": ""}).encode()
    payload["pad"] = "x" * (PAYLOAD_CAP - len(raw))
    data = json.dumps(payload).encode()
    assert len(data) == PAYLOAD_CAP
    kind, reason = served.outcome(served.hand_over("session-end", data))
    assert kind == "taken", reason
    _, body = served.record_of(session="exact-cap-session")
    assert b"exactly at the cap" in body
    served.still_serving()


def test_a_payload_that_is_not_utf8_is_refused_as_not_json(served):
    reason = served.refused("session-end", b'{"session_id":"s","cwd":"\xff\xfe/repo"}')
    assert "not JSON" in reason and "UTF-8" in reason
    served.still_serving()


# --------------------------------------------------------------------------- accepted


def test_bytes_that_are_not_utf8_inside_a_json_transcript_are_stored_redacted(served):
    bad = line(f"caf\u00e9 BAD key {GHP} here", 1).replace(b"BAD", b"\xff\xfe")
    transcript = served.transcript("agent-a0badf00.jsonl",
                                   line("first", 0, "a0badf00") + b"\n" + bad + b"\n")
    kind, reason = served.outcome(served.hand_over(
        "subagent-stop", served.subagent_stop("a0badf00", transcript)))
    assert kind == "taken", reason
    record, body = served.record_of("a0badf00")
    assert b"\xff\xfe" in body  # kept as written: someone said it
    assert GHP.encode() not in body and b"key ghp***" in body and record.redacted_secrets >= 1
    served.still_serving()


def test_a_transcript_ending_in_a_nesting_bomb_is_stored_redacted_not_retried(served):
    bomb = ("[" * 5000 + json.dumps(f"deep {GHP}") + "]" * 5000).encode()
    transcript = served.transcript("agent-a0b0b0b0.jsonl",
                                   line(f"token {GHP}", 0, "a0b0b0b0") + b"\n" + bomb + b"\n")
    kind, reason = served.outcome(served.hand_over(
        "subagent-stop", served.subagent_stop("a0b0b0b0", transcript)))
    assert kind == "taken", reason
    record, body = served.record_of("a0b0b0b0")
    assert GHP.encode() not in body and record.redacted_secrets >= 2
    assert body.count(b"[") >= 5000
    served.still_serving()


@pytest.mark.parametrize("sidecar", ["bomb", "fifo", "dev-zero"])
def test_a_hostile_lineage_sidecar_is_ignored_and_the_transcript_stored(served, sidecar):
    agent = {"bomb": "a5150001", "fifo": "a5150002", "dev-zero": "a5150003"}[sidecar]
    transcript = served.transcript(f"agent-{agent}.jsonl", line("sidecar case", 0, agent) + b"\n")
    meta = served.files / f"agent-{agent}.meta.json"
    if sidecar == "bomb":
        meta.write_text('{"agentType":"x","spawnDepth":' + "[" * 50_000 + "]" * 50_000 + "}")
    elif sidecar == "fifo":
        os.mkfifo(meta)
    else:
        meta.symlink_to("/dev/zero")
    kind, reason = served.outcome(served.hand_over("subagent-stop",
                                                   served.subagent_stop(agent, transcript)))
    assert kind == "taken", reason
    record, _ = served.record_of(agent)
    assert record.spawn_attribution == "unattributed" and record.agent_type == "general-purpose"
    served.still_serving()


# --------------------------------------------------------------------------- the socket


def _raw_connection(served) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(served.env["ABCD_SOCKET"])
    return s


@pytest.mark.parametrize("frame", ["nesting-bomb", "four-gigabytes", "garbage"])
def test_a_hostile_frame_on_the_socket_is_refused_and_the_daemon_keeps_serving(served, frame):
    import msgspec

    if frame == "nesting-bomb":
        payload = (b"\x82" + msgspec.msgpack.encode("op") + msgspec.msgpack.encode("hello")
                   + msgspec.msgpack.encode("x") + b"\x91" * 100_000 + b"\x01")
        data = struct.pack(">I", len(payload)) + payload
    elif frame == "four-gigabytes":
        data = struct.pack(">I", 2**32 - 1) + b"\x00" * 1024  # announced, never sent
    else:
        data = struct.pack(">I", 8) + b"\xc1" * 8
    reply = b""
    with _raw_connection(served) as s:
        try:
            s.sendall(data)
            while chunk := s.recv(65536):
                reply += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon hung up on it: refused
    assert reply == b"" or b"ProtocolError" in reply  # refused and closed, never served
    served.still_serving()


# --------------------------------------------------------------------------- afterwards


def test_after_all_of_it_the_daemon_captures_a_real_transcript_and_reports_the_refusals(served):
    served.captures_a_real_transcript("afeed001", "still here")
    status = served.still_serving()
    failed = list((served.home / "spool" / "failed").glob("*.json"))
    assert status["spool_failed"] == len(failed)
    # Every refused payload kept, each with its reason beside it (nothing deleted).
    assert all((p.parent / (p.name + ".reason")).exists() for p in failed)
    if failed:  # the session-start notice tells the user (from status.json, no daemon call)
        wait_for(lambda: json.loads((served.home / "status.json").read_text())
                 .get("spool_failed") == len(failed), what="status.json to count them")
        res = run_shim("session-start", {"session_id": "next", "cwd": str(served.repo)},
                       served.env)
        assert res.returncode == 0
        assert f"{len(failed)} hook payload(s) could not be used" in res.stderr.decode()
    rss, peak = served.rss()
    print(f"\ndaemon RSS now {rss / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB "
          f"(bound {RSS_BOUND >> 20} MiB)")
