"""A value named once and pasted bare later is masked in the record, through the real
hook → daemon → store → CLI path, also when the two lines land in different capture
batches (``scanner/repeats.py``)."""

from __future__ import annotations

import json
import subprocess
import sys

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, wait_for

SESSION = "3c1f0b7e-5d2a-4e8b-9f61-2a7c4d9e0b13"
#: No upper-case letter: no shape rule takes it bare; only its name says it is secret.
PASSWORD = "k9q2-x7m3-hunter-p4ss"
ABCD = [sys.executable, "-m", "abcd_client"]


def _line(n: int, kind: str, text: str) -> str:
    return json.dumps({"type": kind, "sessionId": SESSION, "uuid": f"00000000-0000-4000-8000-{n:012d}",
                       "timestamp": f"2026-12-02T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                       "message": {"role": kind, "content": text}})


def test_a_value_named_early_is_masked_bare_in_a_later_batch_of_the_stored_record(tmp_path):
    env = env_for(tmp_path)
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("capture_chunk_bytes = 65536\n")  # the smallest batch
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = tmp_path / "projects" / "-repo"
    project.mkdir(parents=True)
    filler = "lorem ipsum dolor sit amet " * 40  # ~1 KB a line: 200 lines span several batches
    lines = [_line(0, "user", f"$ cat .env\nDB_PASSWORD={PASSWORD}\n")]
    lines += [_line(n, "assistant", filler) for n in range(1, 200)]
    lines.append(_line(200, "assistant", f"then ran: psql -h db.example.com {PASSWORD}"))
    transcript = project / f"{SESSION}.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(transcript), "reason": "exit"}
        assert run_shim("session-end", payload, env).returncode == 0
        lane = Lane(Home(home), sha)
        wait_for(lambda: list_records(lane), 60, what="the record")
        out = subprocess.run([*ABCD, "history", "reconstruct", SESSION, "--out", "-"], cwd=repo, env=env,
                             capture_output=True, timeout=60)
        assert out.returncode == 0, out.stderr.decode(errors="replace")
    finally:
        assert daemon.stop() == 0
    stored = b"".join(p.read_bytes() for p in lane.records.iterdir())
    assert PASSWORD.encode() not in stored and PASSWORD.encode() not in out.stdout
    assert PASSWORD[3:-2].encode() not in stored  # not even a sealed copy's middle
    assert b"psql -h db.example.com" in stored  # the line itself is kept, its value masked
