"""The daemon keeps the search index level with what it stores (real daemon process)."""

from __future__ import annotations

import sqlite3

from abcd_daemon.index.db import index_path
from abcd_daemon.paths import Home

from ..conftest import make_repo
from .procs import DaemonProc, env_for, run_shim, wait_for
from .test_end_to_end import SESSION, agents, copy_session, records, session_end_payload, subagent_payload


def _indexed(env) -> int:
    path = index_path(Home(env["ABCD_HOME"]))
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM records WHERE session_id = ?", (SESSION,)).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_records_the_daemon_stores_are_indexed_without_any_cli_call(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    project = copy_session(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for agent in agents(project):
            assert run_shim("subagent-stop", subagent_payload(project, agent, repo), env).returncode == 0
        assert run_shim("session-end", session_end_payload(project, repo), env).returncode == 0
        want = len(agents(project)) + 1
        wait_for(lambda: len(records(env, sha)) == want, 60, what="records")
        wait_for(lambda: _indexed(env) == want, 60, what="index rows")
    finally:
        assert daemon.stop() == 0
