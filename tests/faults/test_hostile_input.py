"""Hostile local input, through the REAL path: shim → spool → one running daemon.

Every case hands a payload to ``hooks/abcd-hook`` (which must exit 0 with an empty
stdout), then watches where the daemon puts it: ``spool/failed/<id>.json`` with a
``.reason`` a user can read, or — where the design accepts the input — a stored,
redacted record. After every case the same daemon must still answer
``abcd daemon status --json`` and its peak resident set (``VmHWM`` in
``/proc/<pid>/status``, the high-water mark since it started, so "throughout" is
checked, not sampled) must stay under :data:`RSS_BOUND`.

RSS bound: measured on this machine, the daemon starts at about 42 MiB and peaks at
about 47 MiB over this whole module — refusing everything here, then building its
scanner and capturing real transcripts. :data:`RSS_BOUND` = 96 MiB is twice that, and
below the 200 MB a daemon that read the 200 MB single-line transcript into memory would
need — so the bound itself shows the over-cap files are refused from ``fstat``, unread.

One daemon serves the whole module, in file order: the cases accumulate in one process,
which is the point (a daemon that survives one hostile input but leaks or wedges on the
fifth would pass per-test daemons).
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.limits import PAYLOAD_CAP, TRANSCRIPT_CAP
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records, read_body

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, shim_log, wait_for

RSS_BOUND = 96 << 20
SESSION = "5a9221e2-0000-4000-8000-00000000f00d"
GHP = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"


def line(text: str, n: int = 0, agent: str = "") -> bytes:
    obj = {"type": "user", "uuid": f"u{n}", "sessionId": SESSION,
           "message": {"role": "user", "content": text}}
    if agent:
        obj["agentId"] = agent
    return json.dumps(obj).encode()


class Served:
    """One running daemon, its home and a repository, and the checks every case makes."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.env = env_for(base)
        self.home = Path(self.env["ABCD_HOME"])
        self.home.mkdir(parents=True)
        # Settle quickly: a transcript whose last line is not JSON is re-read for this long.
        (self.home / "config.toml").write_text("settle_timeout_s = 0.2\n")
        self.repo = base / "repo"
        self.sha = make_repo(self.repo)
        self.lane = Lane(Home(self.home), self.sha)
        self.files = base / "files"
        self.files.mkdir()
        self.daemon = DaemonProc(self.env, base / "daemon.log").wait_ready()
        self.pid = self.daemon.proc.pid

    def hand_over(self, event: str, payload) -> str:
        """Run the shim; it must exit 0 with an empty stdout. Returns the spool id."""
        before = len(shim_log(self.env))
        res = run_shim(event, payload, self.env)
        assert res.returncode == 0, res.stderr
        assert res.stdout == b""
        log = shim_log(self.env)
        assert len(log) == before + 1
        spool_id, _, taken = log[-1].split(" ", 2)
        assert taken == "spooled+rang", taken
        self.last_stderr = res.stderr.decode(errors="replace")
        return spool_id

    def outcome(self, spool_id: str, timeout: float = 20.0) -> tuple[str, str]:
        """("failed", reason) once the payload is in spool/failed, ("taken", "") once
        intake consumed it. (The reason is written before the payload moves, so a
        payload gone from spool/new without a reason was taken.)"""
        reason = self.home / "spool" / "failed" / f"{spool_id}.json.reason"
        pending = self.home / "spool" / "new" / f"{spool_id}.json"

        def settled():
            if reason.exists():
                return "failed", reason.read_text()
            if not pending.exists():
                return ("failed", reason.read_text()) if reason.exists() else ("taken", "")
            return None

        return wait_for(settled, timeout, what=f"intake to take {spool_id}")

    def refused(self, event: str, payload) -> str:
        """Hand over a payload that must be refused: it lands in spool/failed, kept
        whole, with a reason beside it. Returns the reason."""
        spool_id = self.hand_over(event, payload)
        kind, reason = self.outcome(spool_id)
        assert kind == "failed", "the payload was taken, not refused"
        assert reason.strip()
        wait_for((self.home / "spool" / "failed" / f"{spool_id}.json").exists,
                 what="the refused payload kept in spool/failed")
        return reason

    def rss(self) -> tuple[int, int]:
        fields = {}
        for row in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            key, _, value = row.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
        return fields["VmRSS"], fields["VmHWM"]

    def still_serving(self) -> dict:
        """The daemon answers ``abcd daemon status --json`` and stayed under the bound."""
        assert self.daemon.proc.poll() is None, self.daemon.read_log()[-3000:]
        res = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "status", "--json"],
                             env=self.env, capture_output=True, timeout=30)
        assert res.returncode == 0, res.stderr
        status = json.loads(res.stdout)
        assert status["running"] is True and status["pid"] == self.pid
        rss, peak = self.rss()
        assert peak < RSS_BOUND, f"daemon peak RSS {peak >> 20} MiB over {RSS_BOUND >> 20} MiB"
        return status

    def transcript(self, name: str, data: bytes) -> Path:
        path = self.files / name
        path.write_bytes(data)
        return path

    def session_end(self, transcript, session=SESSION) -> dict:
        return {"session_id": session, "cwd": str(self.repo), "hook_event_name": "SessionEnd",
                "transcript_path": str(transcript), "reason": "exit"}

    def subagent_stop(self, agent: str, transcript) -> dict:
        return {"session_id": SESSION, "cwd": str(self.repo), "hook_event_name": "SubagentStop",
                "agent_id": agent, "agent_type": "general-purpose",
                "agent_transcript_path": str(transcript)}

    def record_of(self, agent: str = "", session: str = SESSION, timeout: float = 30.0):
        def found():
            return next((r for r in list_records(self.lane)
                         if r.agent_id == agent and r.session_id == session), None)

        record = wait_for(found, timeout, what=f"a record of {session} {agent}")
        return record, read_body(self.lane, record)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("hostile"))
    yield s
    assert s.daemon.stop() == 0, s.daemon.read_log()[-3000:]


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
    assert f"is over the {TRANSCRIPT_CAP}-byte cap; refused whole, not truncated" in reason
    served.still_serving()


def test_a_transcript_that_is_one_200_megabyte_line_is_refused_without_being_read(served):
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
    assert f"is over the {TRANSCRIPT_CAP}-byte cap" in reason
    _, peak = served.rss()
    assert peak < 200 * 10**6  # never read: reading it would take 200 MB at least
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
    transcript = served.transcript("agent-afeed001.jsonl",
                                   line(f"still here {GHP}", 0, "afeed001") + b"\n")
    kind, reason = served.outcome(served.hand_over(
        "subagent-stop", served.subagent_stop("afeed001", transcript)))
    assert kind == "taken", reason
    _, body = served.record_of("afeed001")
    assert b"still here ghp***" in body and GHP.encode() not in body
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
