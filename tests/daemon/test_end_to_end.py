"""The real path: shim → spool → daemon → staging → drain → records, with real processes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records, read_body

from ..conftest import FIXTURES, git, make_repo
from .procs import DaemonProc, env_for, run_shim, wait_for

SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
REAL = FIXTURES / "real_projects" / "-experiments-worktrees"


def copy_session(dest: Path) -> Path:
    """A copy of a real Claude Code session (main thread + sub-agents + meta sidecars)."""
    project = dest / "projects" / "-repo"
    project.mkdir(parents=True)
    shutil.copy(REAL / f"{SESSION}.jsonl", project)
    shutil.copytree(REAL / SESSION, project / SESSION)
    return project


def subagent_payload(project: Path, agent: str, cwd) -> dict:
    return {"session_id": SESSION, "cwd": str(cwd), "hook_event_name": "SubagentStop",
            "transcript_path": str(project / f"{SESSION}.jsonl"), "agent_id": agent,
            "agent_type": "general-purpose",
            "agent_transcript_path": str(project / SESSION / "subagents" / f"agent-{agent}.jsonl")}


def session_end_payload(project: Path, cwd) -> dict:
    return {"session_id": SESSION, "cwd": str(cwd), "hook_event_name": "SessionEnd",
            "transcript_path": str(project / f"{SESSION}.jsonl"), "reason": "exit"}


def agents(project: Path) -> list[str]:
    return sorted(p.name[len("agent-"):-len(".jsonl")]
                  for p in (project / SESSION / "subagents").glob("agent-*.jsonl"))


def records(env, sha):
    return list_records(Lane(Home(env["ABCD_HOME"]), sha))


def test_subagent_stop_then_session_end_store_every_transcript_with_lineage(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    first = agents(project)[0]
    meta = project / SESSION / "subagents" / f"agent-{first}.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "spawnDepth": 1, "toolUseId": "toolu_01X"}))
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for agent in agents(project):
            assert run_shim("subagent-stop", subagent_payload(project, agent, repo), env).returncode == 0
        assert run_shim("session-end", session_end_payload(project, repo), env).returncode == 0
        wait_for(lambda: len(records(env, sha)) == len(agents(project)) + 1, 60, what="records")
    finally:
        assert daemon.stop() == 0
    by_agent = {r.agent_id: r for r in records(env, sha)}
    assert by_agent[""].session_id == SESSION and by_agent[""].lineage_source == "hook"
    lead = by_agent[first]
    assert (lead.spawn_attribution, lead.spawn_depth, lead.spawn_tool_use_id) == ("sidecar", 1, "toolu_01X")
    assert lead.agent_type == "general-purpose"  # the payload's type wins over the sidecar's
    for agent in agents(project)[1:]:
        assert by_agent[agent].spawn_attribution == "unattributed"
        assert by_agent[agent].session_id == SESSION
    body = read_body(Lane(Home(env["ABCD_HOME"]), sha), by_agent[first])
    original = (project / SESSION / "subagents" / f"agent-{first}.jsonl").read_bytes()
    assert len(body.splitlines()) == len(original.splitlines())


def test_a_daemon_started_afterwards_stores_every_spooled_payload(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    for agent in agents(project):
        res = run_shim("subagent-stop", subagent_payload(project, agent, repo), env)
        assert res.returncode == 0
    assert run_shim("session-end", session_end_payload(project, repo), env).returncode == 0
    assert records(env, sha) == []
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        wait_for(lambda: len(records(env, sha)) == len(agents(project)) + 1, 60, what="catch-up")
        wait_for(lambda: not os.listdir(Path(env["ABCD_HOME"]) / "spool" / "new"), what="empty spool")
    finally:
        assert daemon.stop() == 0


def test_the_same_payload_twice_is_one_record(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    agent = agents(project)[0]
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for _ in range(2):
            run_shim("subagent-stop", subagent_payload(project, agent, repo), env)
        wait_for(lambda: len(records(env, sha)) == 1, 60, what="a record")
        wait_for(lambda: not os.listdir(Path(env["ABCD_HOME"]) / "spool" / "new"), what="empty spool")
        run_shim("subagent-stop", subagent_payload(project, agent, repo), env)
        wait_for(lambda: not os.listdir(Path(env["ABCD_HOME"]) / "spool" / "new"), what="empty spool")
    finally:
        assert daemon.stop() == 0
    assert len(records(env, sha)) == 1


def test_a_payload_whose_worktree_is_gone_resolves_through_the_session_note(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    worktree = tmp_path / "wt"
    git("worktree", "add", "-q", str(worktree), cwd=repo)
    project = copy_session(tmp_path)
    agent = agents(project)[0]
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        run_shim("session-start", {"session_id": SESSION, "cwd": str(repo), "source": "startup",
                                   "hook_event_name": "SessionStart"}, env)
        wait_for(lambda: (Path(env["ABCD_HOME"]) / "transcripts" / sha / "sessions" / SESSION).exists(),
                 what="the session note")
        git("worktree", "remove", "--force", str(worktree), cwd=repo)  # the harness removes it
        run_shim("subagent-stop", subagent_payload(project, agent, worktree), env)
        wait_for(lambda: len(records(env, sha)) == 1, 60, what="the sub-agent's record")
        assert "repository resolved via session)" in daemon.read_log()
    finally:
        assert daemon.stop() == 0
    assert records(env, sha)[0].agent_id == agent


def test_a_payload_with_no_transcript_path_marks_the_gap_and_session_start_reports_it(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SubagentStop",
                   "agent_id": "a1234567"}
        assert run_shim("subagent-stop", payload, env).returncode == 0
        marker = Path(env["ABCD_HOME"]) / "transcripts" / sha / "subagent-payload-gap.json"
        wait_for(marker.exists, what="the gap marker")
        assert json.loads(marker.read_text())["count"] == 1
        status = Path(env["ABCD_HOME"]) / "status.json"
        wait_for(lambda: status.exists() and '"gap_count":1' in status.read_text(), what="status")
        res = run_shim("session-start", {"session_id": "next", "cwd": str(repo)}, env)
        assert b"SubagentStop 1 time(s) without an agent_transcript_path" in res.stderr
    finally:
        assert daemon.stop() == 0


def test_an_unusable_payload_moves_to_failed_with_a_reason(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        run_shim("subagent-stop", b"this is not json", env)
        run_shim("subagent-stop", {"session_id": "../../etc", "agent_id": "a1"}, env)
        run_shim("session-end", {"session_id": "s1", "cwd": str(tmp_path),
                                 "transcript_path": "/etc/shadow-does-not-exist"}, env)
        failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
        # The reason is written before the payload is moved beside it: wait for both.
        wait_for(lambda: failed.exists() and len(list(failed.glob("*.reason"))) == 3
                 and len(list(failed.glob("*.json"))) == 3, what="3 payloads with reasons")
        reasons = sorted(p.read_text() for p in failed.glob("*.reason"))
        assert any("not JSON" in r for r in reasons)
        assert any("not a usable id" in r for r in reasons)
        assert any("cannot resolve the repository" in r or "does not exist" in r for r in reasons)
        assert len(list(failed.glob("*.json"))) == 3  # nothing deleted
    finally:
        assert daemon.stop() == 0


def test_a_session_whose_main_file_is_empty_reconstructs_through_the_cli_as_empty(tmp_path):
    import subprocess
    import sys

    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    (project / f"{SESSION}.jsonl").write_bytes(b"")  # the harness left the main file empty
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for agent in agents(project):
            assert run_shim("subagent-stop", subagent_payload(project, agent, repo), env).returncode == 0
        assert run_shim("session-end", session_end_payload(project, repo), env).returncode == 0
        wait_for(lambda: len(records(env, sha)) == len(agents(project))
                 and (lane.empty_mains / SESSION).exists(), 60, what="the agents and the marker")
        out = tmp_path / "out"
        out.mkdir()
        res = subprocess.run([str(Path(sys.executable).with_name("abcd")), "history", "reconstruct",
                              SESSION[:8], "--out", str(out)], env=env, cwd=repo,
                             capture_output=True, text=True, timeout=120)
    finally:
        assert daemon.stop() == 0
    assert res.returncode == 0, res.stderr
    artefact = (out / f"{SESSION}.md").read_text()
    assert "- main thread: EMPTY (the harness's main file was zero bytes" in artefact
    assert "ABSENT" not in artefact
    telemetry = json.loads((out / f"{SESSION}.telemetry.json").read_text())
    assert telemetry["completeness"]["main_thread_empty"] is True
    failed = Path(env["ABCD_HOME"]) / "spool" / "failed"
    assert not failed.exists() or os.listdir(failed) == []  # an empty main is not a failure
