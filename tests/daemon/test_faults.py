"""Signals and kills: the daemon stops cleanly, and a kill -9 loses nothing."""

from __future__ import annotations

import concurrent.futures
import os
import random
import time
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo
from .procs import DaemonProc, env_for, run_shim, wait_for

SESSION = "5a9221e2-0000-4000-8000-00000000beef"


def transcript(path: Path, agent: str, size: int, seed: int) -> Path:
    rng = random.Random(seed)
    lines = []
    total = 0
    n = 0
    while total < size:
        text = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "fix", "test", "deploy"])
                        for _ in range(rng.randint(20, 200)))
        line = ('{"type":"assistant","sessionId":"%s","agentId":"%s","uuid":"u%d","message":'
                '{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":"%s"}]}}\n'
                % (SESSION, agent, n, n, text))
        lines.append(line)
        total += len(line)
        n += 1
    path.write_text("".join(lines))
    return path


def payload(repo, agent, path):
    return {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SubagentStop",
            "agent_id": agent, "agent_type": "general-purpose", "agent_transcript_path": str(path)}


def all_files(root: Path) -> list[Path]:
    return [Path(d) / f for d, _, files in os.walk(root) for f in files]


def test_sigterm_mid_drain_exits_zero_and_loses_nothing(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    agents = [f"a{i:07d}" for i in range(6)]
    for i, agent in enumerate(agents):
        path = transcript(tmp_path / f"agent-{agent}.jsonl", agent, 6 << 20, i)
        assert run_shim("subagent-stop", payload(repo, agent, path), env).returncode == 0
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    wait_for(lambda: len(list_records(lane)) >= 1, 120, what="the drain to be under way")
    assert daemon.stop() == 0
    assert "stopping" in daemon.read_log()
    stored = {r.agent_id for r in list_records(lane)}
    staged = {p.name for p in lane.staging.glob("*.raw")}
    assert len(stored) + len(staged) + len(os.listdir(Path(env["ABCD_HOME"]) / "spool" / "new")) >= len(agents)
    again = DaemonProc(env, tmp_path / "d2.log").wait_ready()
    try:
        wait_for(lambda: {r.agent_id for r in list_records(lane)} == set(agents), 180, what="catch-up")
    finally:
        assert again.stop() == 0
    assert len(list_records(lane)) == len(agents)


def test_kill_9_during_a_burst_loses_nothing_and_duplicates_nothing(tmp_path, saturates_the_machine):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    agents = [f"b{i:07d}" for i in range(50)]
    paths = {a: transcript(tmp_path / f"agent-{a}.jsonl", a, 200_000, i) for i, a in enumerate(agents)}
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    with concurrent.futures.ThreadPoolExecutor(max_workers=25) as pool:
        futures = [pool.submit(run_shim, "subagent-stop", payload(repo, a, paths[a]), env) for a in agents]
        time.sleep(0.4)
        daemon.kill9()  # mid-burst: some payloads taken, some staged, some mid-capture
        results = [f.result() for f in futures]
    assert all(r.returncode == 0 for r in results)
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    again = DaemonProc(env, tmp_path / "d2.log").wait_ready()
    try:
        wait_for(lambda: len(list_records(lane)) >= len(agents), 180, what="every record")
        time.sleep(1)
    finally:
        assert again.stop() == 0
    stored = [r.agent_id for r in list_records(lane)]
    assert sorted(stored) == sorted(agents)  # each exactly once
    leftovers = [p for p in all_files(Path(env["ABCD_HOME"])) if p.name.startswith(".abcd-tmp-")]
    assert leftovers == []
    assert list(lane.staging.glob("*.raw")) == []
    assert os.listdir(Path(env["ABCD_HOME"]) / "spool" / "new") == []
