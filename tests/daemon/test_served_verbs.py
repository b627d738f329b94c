"""Verbs the daemon serves give what the in-process core gives (same bytes, same report)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..ingest.conftest import build_fixture_tree
from .procs import DaemonProc, env_for, wait_for

ABCD = Path(sys.executable).with_name("abcd")


def abcd(env, *args, cwd=None, local=False):
    env = dict(env, ABCD_LOCAL="1") if local else dict(env)
    res = subprocess.run([str(ABCD), *args], capture_output=True, env=env, cwd=cwd, timeout=300)
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def test_ingest_is_served_by_the_daemon_and_list_matches_the_store(tmp_path, fixtures_dir):
    env = env_for(tmp_path)
    tree = build_fixture_tree(tmp_path / "tree", fixtures_dir)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        code, out, err = abcd(env, "history", "ingest", str(tree.root), "--json")
        assert code == 0, err
        report = json.loads(out)
        assert len(report["staged"]) == 80 and report["drain"]["failed"] == []
        repo, _ = tree.repos["worktrees"]
        served = abcd(env, "history", "list", "--json", cwd=repo)
        local = abcd(env, "history", "list", "--json", cwd=repo, local=True)
        assert served[0] == 0 and json.loads(served[1]) == json.loads(local[1])
        assert len(json.loads(served[1])) > 1
        again = json.loads(abcd(env, "history", "ingest", str(tree.root), "--json")[1])
        assert again["staged"] == [] and again["present"] >= 80  # idempotent through the daemon
    finally:
        assert daemon.stop() == 0


def test_a_session_captured_through_the_hooks_reconstructs_with_every_agent_placed(tmp_path):
    from ..conftest import make_repo
    from .test_end_to_end import SESSION, agents, copy_session, records, session_end_payload, subagent_payload
    from .procs import run_shim

    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for agent in agents(project):
            run_shim("subagent-stop", subagent_payload(project, agent, repo), env)
        run_shim("session-end", session_end_payload(project, repo), env)
        wait_for(lambda: len(records(env, sha)) == len(agents(project)) + 1, 60, what="records")
        (tmp_path / "served").mkdir()
        code, out, err = abcd(env, "history", "reconstruct", SESSION, "--out",
                              str(tmp_path / "served"), "--json", cwd=repo)
        assert code == 0, err
    finally:
        assert daemon.stop() == 0
    (tmp_path / "local").mkdir()
    assert abcd(env, "history", "reconstruct", SESSION, "--out", str(tmp_path / "local"),
                cwd=repo, local=True)[0] == 0
    served = (tmp_path / "served" / f"{SESSION}.md").read_bytes()
    assert served == (tmp_path / "local" / f"{SESSION}.md").read_bytes()
    telemetry = json.loads((tmp_path / "served" / f"{SESSION}.telemetry.json").read_text())
    completeness = telemetry["completeness"]
    assert completeness["main_thread_present"] and completeness["agents_total"] == len(agents(project)) + 1
    assert completeness["agents_without_spawn_point"] == 0  # every sub-agent placed
    for agent in agents(project):
        assert f"## Agent `{agent}`".encode() in served


def test_drain_is_served_by_the_running_daemon(tmp_path):
    from abcd_daemon.config import Config
    from abcd_daemon.paths import Home
    from abcd_daemon.queue.stage import stage
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.meta import CaptureMeta

    from ..conftest import make_repo

    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    # A daemon whose own loop waits an hour between passes: only the request drains.
    home = Path(env["ABCD_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text("drain_interval_s = 3600\n")
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        # The start-up work (the loop's first pass, the harness catch-up and its first
        # coverage summary) is over once status.json carries that summary.
        status = home / "status.json"
        wait_for(lambda: status.exists() and '"missing"' in status.read_text(), what="start-up")
        lane = Lane(Home(env["ABCD_HOME"]), sha)
        for i in range(3):
            stage(lane, b'{"type":"user","message":{"content":"x"}}\n', CaptureMeta(session_id=f"s{i}"),
                  config=Config(), now_ns=1_767_225_600 * 10**9 + i)
        code, out, err = abcd(env, "history", "drain", "--json", cwd=repo)
        assert code == 0, err
        # The daemon's own start-up pass may take an entry staged as it starts; the
        # request drains the rest, and afterwards every one is stored.
        captured = {r["session_id"] for r in json.loads(out)["captured"]}
        assert captured <= {"s0", "s1", "s2"}, out
        from abcd_daemon.store.records import list_records

        assert sorted(r.session_id for r in list_records(lane)) == ["s0", "s1", "s2"]
    finally:
        assert daemon.stop() == 0
