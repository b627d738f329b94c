"""spool/failed: unredacted like staging — counted, listed with its reason, owner-only,
retried and discarded by verbs; a payload of an event abcd does not handle is dropped
and counted, never "failed"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, wait_for

SESSION = "5a9221e2-0000-4000-8000-0000000fa11d"


def abcd(env, *args, cwd=None):
    res = subprocess.run([sys.executable, "-m", "abcd_client", *args], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=120)
    return res.returncode, res.stdout, res.stderr


def transcript(path: Path, text: str = "hello") -> Path:
    path.write_text(json.dumps({"type": "user", "sessionId": SESSION,
                                "message": {"role": "user", "content": text}}) + "\n")
    return path


def fail_one(env, tmp_path, later_repo: Path) -> str:
    """Hand over a session-end whose cwd is a repository that does not exist yet: intake
    cannot resolve it, so it fails. Returns its spool id."""
    payload = {"session_id": SESSION, "cwd": str(later_repo), "hook_event_name": "SessionEnd",
               "transcript_path": str(transcript(tmp_path / "t.jsonl", "kept for later"))}
    assert run_shim("session-end", payload, env, cwd=tmp_path).returncode == 0
    failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
    # The reason is written first, then the payload moved beside it.
    payload = wait_for(lambda: next(failed.glob("*.json"), None), what="the failed payload")
    assert (failed / (payload.name + ".reason")).exists()
    return payload.name[: -len(".json")]


@pytest.fixture
def served(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    yield env
    assert daemon.stop() == 0, daemon.read_log()


def test_a_failed_payload_is_counted_listed_with_its_reason_and_owner_only(tmp_path, served):
    env = served
    spool_id = fail_one(env, tmp_path, tmp_path / "later")
    elsewhere = tmp_path / "other"
    make_repo(elsewhere)
    code, out, _ = abcd(env, "history", "staged", cwd=elsewhere)
    assert code == 0
    assert spool_id in out and "cannot resolve the repository" in out and "session-end" in out
    assert "1 failed hook payload(s) hold" in out and "UNREDACTED" in out
    assert "nothing staged" not in out  # a refused SessionEnd is not "every session stored"
    code, out, _ = abcd(env, "history", "staged", "--all-repos", cwd=tmp_path)
    assert code == 0 and "1 failed hook payload(s) hold" in out
    code, out, _ = abcd(env, "daemon", "status", "--json")
    status = json.loads(out)
    failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
    size = (failed / f"{spool_id}.json").stat().st_size
    assert (status["spool_failed"], status["spool_failed_bytes"]) == (1, size)
    assert [f["id"] for f in status["failed"]] == [spool_id]
    assert "cannot resolve the repository" in status["failed"][0]["reason"]
    code, out, _ = abcd(env, "daemon", "status")
    assert f"failed:      {spool_id}  session-end  " in out
    wait_for(lambda: json.loads((Path(env["ABCD_HOME"]) / "status.json").read_text())
             .get("spool_failed_bytes") == size, what="status.json to count it")
    notice = run_shim("session-start", {"session_id": "next", "cwd": str(elsewhere)}, env)
    assert b"1 hook payload(s) could not be used and are kept, UNREDACTED" in notice.stderr
    assert b"abcd history retry --all" in notice.stderr
    assert oct(failed.stat().st_mode & 0o777) == "0o700"
    assert {oct(p.stat().st_mode & 0o777) for p in failed.iterdir()} == {"0o600"}


def test_retry_after_fixing_the_cause_stores_the_transcript_and_empties_spool_failed(tmp_path, served):
    env = served
    later = tmp_path / "later"
    spool_id = fail_one(env, tmp_path, later)
    sha = make_repo(later)  # the cause: the repository now exists
    code, out, err = abcd(env, "history", "retry", spool_id[:12], cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"staged      {spool_id}")
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    wait_for(lambda: list_records(lane), what="the retried session's record")
    assert list_records(lane)[0].session_id == SESSION
    assert os.listdir(Path(env["ABCD_HOME"]) / "spool" / "failed") == []  # payload and reason


def test_a_retry_that_fails_again_keeps_the_payload_with_a_fresh_reason_and_exits_1(tmp_path, served):
    env = served
    spool_id = fail_one(env, tmp_path, tmp_path / "never")
    failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
    before = (failed / f"{spool_id}.json").read_bytes()
    code, out, err = abcd(env, "history", "retry", "--all", cwd=tmp_path)
    assert code == 1
    assert out.startswith(f"FAILED      {spool_id}  cannot resolve the repository")
    assert "1 payload(s) could not be taken" in err
    assert (failed / f"{spool_id}.json").read_bytes() == before  # nothing lost
    assert "cannot resolve" in (failed / f"{spool_id}.json.reason").read_text()


def test_retry_with_no_daemon_runs_intake_in_process(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        later = tmp_path / "later"
        spool_id = fail_one(env, tmp_path, later)
    finally:
        assert daemon.stop() == 0
    make_repo(later)
    code, out, err = abcd(env, "history", "retry", spool_id, cwd=tmp_path)
    assert code == 0, err
    assert out.startswith(f"staged      {spool_id}")
    code, out, _ = abcd(env, "history", "staged", "--json", cwd=later)
    staged = json.loads(out)
    assert [e["session_id"] for e in staged["staged"]] == [SESSION] and staged["failed"] == []


def test_discard_removes_a_failed_payload_and_its_reason_only_with_yes(tmp_path, served):
    env = served
    spool_id = fail_one(env, tmp_path, tmp_path / "never")
    failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
    code, _, err = abcd(env, "history", "discard", spool_id, cwd=tmp_path)
    assert code == 2 and "pass --yes" in err and "hook payload" in err
    assert (failed / f"{spool_id}.json").exists()
    code, out, err = abcd(env, "history", "discard", spool_id, "--yes", cwd=tmp_path)  # no checkout
    assert code == 0, err
    assert "unredacted hook payload, unrecoverably" in out
    assert os.listdir(failed) == []


def test_retry_refuses_an_unknown_id_and_asks_for_ids_or_all(tmp_path):
    env = env_for(tmp_path)
    code, _, err = abcd(env, "history", "retry", cwd=tmp_path)
    assert code == 2 and "pass --all" in err
    code, _, err = abcd(env, "history", "retry", "01796000000000000000-1-deadbeef", cwd=tmp_path)
    assert code == 1 and "no failed payload" in err and "abcd history staged" in err


def test_a_payload_of_an_event_abcd_does_not_handle_is_dropped_and_counted_not_failed(tmp_path, served):
    env = served
    assert run_shim("pre-tool-use", {"session_id": SESSION, "cwd": str(tmp_path)}, env).returncode == 0
    home = Path(env["ABCD_HOME"])

    def dropped():
        code, out, _ = abcd(env, "daemon", "status", "--json")
        return json.loads(out).get("events_dropped") == 1 and json.loads(out)

    status = wait_for(dropped, what="the drop to be counted")
    assert status.get("spool_failed", 0) == 0 and status.get("spool_pending", 0) == 0
    assert not (home / "spool" / "failed").exists() or os.listdir(home / "spool" / "failed") == []
