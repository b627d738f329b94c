"""A hook-less harness under a watched root is captured by the running daemon."""

from __future__ import annotations

import json
import time
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo
from ..ingest.conftest import store_record, write_jsonl
from .procs import DaemonProc, env_for, wait_for


def test_watched_store_harness_is_caught_up_at_start_and_followed_live(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "project"
    sha = make_repo(repo)
    root = repo / ".agent" / "transcripts"
    # Written while no daemon ran: recovered by the start-up catch-up.
    write_jsonl(root / "sess-old.jsonl", [store_record("sess-old", n) for n in range(4)])
    home = Path(env["ABCD_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'watch_roots = ["{root}"]\nwatch_settle_s = 0.5\n')
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    lane = Lane(Home(env["ABCD_HOME"]), sha)
    try:
        wait_for(lambda: {r.session_id for r in list_records(lane)} == {"sess-old"}, 60,
                 what="the catch-up record")
        time.sleep(1.0)  # let the watch arm
        write_jsonl(root / "sess-new.jsonl", [store_record("sess-new", n) for n in range(4)])
        write_jsonl(root / "sess-new" / "subagents" / "agent-ag1.jsonl",
                    [store_record("sess-new", n, agent="ag1") for n in range(3)])
        wait_for(lambda: len(list_records(lane)) == 3, 60, what="the live records")
        status = json.loads(subprocess_status(env))
        assert status["watch_roots"][0]["state"] == "watching"
    finally:
        assert daemon.stop() == 0
    agents = {(r.session_id, r.agent_id) for r in list_records(lane)}
    assert agents == {("sess-old", ""), ("sess-new", ""), ("sess-new", "ag1")}


def subprocess_status(env) -> str:
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "status", "--json"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout
