"""One running daemon shared by a hostile-input module, and the checks every case makes.

RSS bound: measured on this machine, the daemon starts at about 42 MiB and peaks at
about 47 MiB over a whole hostile module — refusing everything there, then building its
scanner and capturing real transcripts. :data:`RSS_BOUND` = 96 MiB is twice that, and
below the 200 MB a daemon that read the 200 MB single-line transcript into memory would
need — so the bound itself shows the over-cap files are refused from ``fstat``, unread.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records, read_body

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, shim_log, wait_for

RSS_BOUND = 96 << 20
SESSION = "5a9221e2-0000-4000-8000-00000000f00d"
GHP = "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"


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
        self.line_cap = 64 << 20
        (self.home / "config.toml").write_text(
            f"settle_timeout_s = 0.2\nmax_line_bytes = {self.line_cap}\n")
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

    def ring(self) -> None:
        """Ring the doorbell as a shim does: connect, then close."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.env["ABCD_SOCKET"])

    def status_json(self) -> dict:
        """The daemon's status file; ``{}`` until its first write (callers wait on it)."""
        try:
            return json.loads((self.home / "status.json").read_text())
        except FileNotFoundError:
            return {}

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

    def captures_a_real_transcript(self, agent: str, text: str) -> None:
        """The closing check of a hostile module: a sub-agent transcript carrying ``text``
        and a secret, handed over by the shim, is stored with the secret redacted."""
        transcript = self.transcript(f"agent-{agent}.jsonl",
                                     line(f"{text} {GHP}", 0, agent) + b"\n")
        kind, reason = self.outcome(self.hand_over("subagent-stop",
                                                   self.subagent_stop(agent, transcript)))
        assert kind == "taken", reason
        _, body = self.record_of(agent)
        assert f"{text} ghp***".encode() in body and GHP.encode() not in body

    def record_of(self, agent: str = "", session: str = SESSION, timeout: float = 30.0):
        def found():
            return next((r for r in list_records(self.lane)
                         if r.agent_id == agent and r.session_id == session), None)

        record = wait_for(found, timeout, what=f"a record of {session} {agent}")
        return record, read_body(self.lane, record)
