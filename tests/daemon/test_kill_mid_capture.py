"""A kill -9 in the middle of a streaming capture (issue 16): the redacted body is
being written to its temp file in ``records/`` when the daemon dies. No record may be
partial or present, the entry stays staged, and the restarted daemon sweeps the temp
file and stores the transcript exactly once."""

from __future__ import annotations

import json
import os
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records, read_body

from ..conftest import make_repo
from .procs import DaemonProc, env_for, run_shim, wait_for

SESSION = "5a9221e2-0000-4000-8000-0000000c1119"


def _transcript(path: Path, lines: int) -> bytes:
    text = " ".join(["the quick brown fox jumps over the lazy dog"] * 40)
    data = b"".join(json.dumps({"type": "user", "sessionId": SESSION, "n": i,
                                "message": {"role": "user", "content": text}}).encode() + b"\n"
                    for i in range(lines))
    path.write_bytes(data)
    return data


def _store_with_a_big_transcript(tmp_path: Path):
    """A store, a repository and a ~22 MB transcript (seconds of redaction) in
    ``tmp_path``, with small capture chunks so the body temp file exists for most of
    the capture: ``(env, repo, transcript bytes, the repository's lane)``."""
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    home = Path(env["ABCD_HOME"])
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "config.toml").write_text("settle_timeout_s = 0.2\ncapture_chunk_bytes = 65536\n")
    data = _transcript(tmp_path / "t.jsonl", 12000)
    return env, repo, data, Lane(Home(str(home)), sha)


def test_a_kill_9_mid_capture_leaves_no_record_keeps_the_entry_and_stores_once(tmp_path):
    env, repo, data, lane = _store_with_a_big_transcript(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(tmp_path / "t.jsonl")}
        assert run_shim("session-end", payload, env, cwd=repo).returncode == 0

        def body_being_written():
            try:
                return [n for n in os.listdir(lane.records) if n.startswith(".abcd-tmp-")
                        and os.path.getsize(lane.records / n) > 0]
            except FileNotFoundError:
                return []

        wait_for(body_being_written, timeout=120, interval=0.01, what="the capture under way")
    finally:
        daemon.kill9()
    assert [n for n in os.listdir(lane.records) if n.endswith(".md")] == []  # nothing partial
    assert [e.session_id for e in list_staged(lane, now_ns=0, ttl_s=1e9)] == [SESSION]
    daemon = DaemonProc(env, tmp_path / "d2.log").wait_ready()
    try:
        [record] = wait_for(lambda: list_records(lane), timeout=180, what="the stored record")
        assert read_body(lane, record).count(b"\n") == data.count(b"\n")
        assert not [n for n in os.listdir(lane.records) if n.startswith(".abcd-tmp-")]
        assert list_staged(lane, now_ns=0, ttl_s=1e9) == []
    finally:
        assert daemon.stop() == 0, daemon.read_log()
    assert len(list_records(lane)) == 1


def _body_temps(lane: Lane) -> list[int]:
    """Sizes of the capture's body temp files in ``records/`` (empty when none)."""
    try:
        names = [n for n in os.listdir(lane.records) if n.startswith(".abcd-tmp-")]
    except FileNotFoundError:
        return []
    sizes = []
    for name in names:
        try:
            sizes.append(os.path.getsize(lane.records / name))
        except FileNotFoundError:
            pass
    return sizes


def test_kill_9_at_several_instants_of_one_capture_then_it_is_stored_exactly_once(tmp_path):
    """Issue 16, the kill-during-capture case with a real process: the transcript handed
    over by the real hook shim, the daemon SIGKILLed at three points of its capture (a
    tenth, a third and three fifths of the body written), restarted after each. After
    every kill: the kill landed mid-capture (a body temp file part-written, no record),
    no record file exists, the entry is still staged. At the end: one record, whole."""
    env, repo, data, lane = _store_with_a_big_transcript(tmp_path)
    payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd",
               "transcript_path": str(tmp_path / "t.jsonl")}
    landed = []
    daemon = DaemonProc(env, tmp_path / "d0.log").wait_ready()
    try:
        assert run_shim("session-end", payload, env, cwd=repo).returncode == 0
        for i, fraction in enumerate((0.1, 0.33, 0.6)):
            at = int(len(data) * fraction)
            sizes = wait_for(lambda: [s for s in _body_temps(lane) if s >= at], timeout=120,
                             interval=0.005, what=f"{fraction:.0%} of the body written")
            daemon.kill9()
            assert [n for n in os.listdir(lane.records) if n.endswith(".md")] == [], i
            assert [e.session_id for e in list_staged(lane, now_ns=0, ttl_s=1e9)] == [SESSION], i
            left = _body_temps(lane)  # what the dead daemon was writing: still part-written
            assert left and max(left) < len(data), (i, left)
            landed.append(max(sizes))
            daemon = DaemonProc(env, tmp_path / f"d{i + 1}.log").wait_ready()
        assert len(landed) == 3 and landed == sorted(landed)  # three kills, each further in
        [record] = wait_for(lambda: list_records(lane), timeout=180, what="the stored record")
        assert read_body(lane, record) == data
        assert _body_temps(lane) == []
        assert list_staged(lane, now_ns=0, ttl_s=1e9) == []
    finally:
        assert daemon.stop() == 0, daemon.read_log()
    assert len(list_records(lane)) == 1
