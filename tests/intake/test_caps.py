"""The two caps through the real hook → daemon path: a transcript over one is refused
whole, the reason is where the user looks (``staged``, status, the SessionStart
notice), and the payload is kept until a retry under a raised cap stores it."""

from __future__ import annotations

import json
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records, read_body

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, wait_for
from .test_failed import abcd

SESSION = "5a9221e2-0000-4000-8000-00000000ca95"


def _config(env, **caps) -> None:
    text = "settle_timeout_s = 0.2\n" + "".join(f"{k} = {v}\n" for k, v in caps.items())
    home = Path(env["ABCD_HOME"])
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


def _transcript(path: Path, long_line: int) -> bytes:
    lines = [{"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": "hi"}},
             {"type": "assistant", "sessionId": SESSION, "message": {"content": "z" * long_line}}]
    data = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    path.write_bytes(data)
    return data


def test_a_line_over_the_cap_is_refused_reported_kept_and_stored_after_a_retry(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    _config(env, max_line_bytes=4096)
    data = _transcript(tmp_path / "t.jsonl", 6000)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(tmp_path / "t.jsonl")}
        assert run_shim("session-end", payload, env, cwd=repo).returncode == 0
        failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
        kept = wait_for(lambda: next(failed.glob("*.json"), None), what="the refused payload")
        reason = wait_for(lambda: (failed / (kept.name + ".reason")).read_text() or None,
                          what="its reason")
        assert "line 2" in reason and "4096-byte line cap (max_line_bytes)" in reason
        assert "refused whole" in reason and "abcd history retry" in reason
        code, out, _ = abcd(env, "history", "staged", cwd=repo)
        assert code == 0 and "4096-byte line cap" in out and kept.name[:-5] in out
        code, out, _ = abcd(env, "daemon", "status", "--json")
        assert json.loads(out)["spool_failed"] == 1
        notice = run_shim("session-start", {"session_id": "next", "cwd": str(repo)}, env)
        assert b"1 hook payload(s) could not be used and are kept" in notice.stderr
        assert list_records(Lane(Home(env["ABCD_HOME"]), sha)) == []
    finally:
        assert daemon.stop() == 0, daemon.read_log()
    _config(env, max_line_bytes=8192)  # the user raises the cap and restarts the daemon
    daemon = DaemonProc(env, tmp_path / "d2.log").wait_ready()
    try:
        code, out, err = abcd(env, "history", "retry", "--all", cwd=repo)
        assert code == 0, err
        lane = Lane(Home(env["ABCD_HOME"]), sha)
        [record] = wait_for(lambda: list_records(lane), what="the stored record")
        assert read_body(lane, record).count(b"\n") == data.count(b"\n")
        assert list(failed.iterdir()) == []
    finally:
        assert daemon.stop() == 0, daemon.read_log()


def test_a_transcript_over_the_file_cap_is_refused_whole_and_kept(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    _config(env, max_transcript_bytes=8192)
    _transcript(tmp_path / "t.jsonl", 9000)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(tmp_path / "t.jsonl")}
        assert run_shim("session-end", payload, env, cwd=repo).returncode == 0
        failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
        kept = wait_for(lambda: next(failed.glob("*.json"), None), what="the refused payload")
        reason = wait_for(lambda: (failed / (kept.name + ".reason")).read_text() or None,
                          what="its reason")
        assert "8192-byte transcript cap (max_transcript_bytes)" in reason
        assert list_records(Lane(Home(env["ABCD_HOME"]), sha)) == []
        assert not list((Path(env["ABCD_HOME"]) / "transcripts" / sha / "staging").glob(".abcd-tmp-*"))
    finally:
        assert daemon.stop() == 0, daemon.read_log()
