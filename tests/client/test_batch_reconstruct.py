"""``abcd history reconstruct ID… | --all | --all-repos``: one request to a real daemon
over its real socket, one pair of files per session, failures named while the rest is
written; short ids through every verb that takes one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import format_record

from ..conftest import make_repo, run_on_a_terminal
from ..daemon.procs import DaemonProc, env_for
from ..reconstruct.support import CC, record, tool_use, usage

ABCD = Path(sys.executable).with_name("abcd")
#: Sessions per repository: (session id, start second). Two share an 8-char prefix.
REPO_A = [("11aa22bb-0001-4000-8000-000000000001", 0), ("11aa22bb-0002-4000-8000-000000000002", 50),
          ("33cc44dd-0003-4000-8000-000000000003", 100)]
REPO_B = [("55ee66ff-0004-4000-8000-000000000004", 200)]


def store_session(lane: Lane, session: str, start: int) -> None:
    main = (CC(session, start=start).user("do it")
            .assistant("m1", tool_use("tu_1", "Task", prompt="help"), usage=usage())
            .result("tu_1", "helped").say("m2", "done", usage=usage()))
    sub = CC(session, agent_id=f"ag{session[:6]}", start=start).user("help").say(
        "s1", "helping", usage=usage())
    for rec, body in (record(main.body(), session=session, captured=start),
                      record(sub.body(), f"ag{session[:6]}", session=session, captured=start + 1,
                             spawn_tool_use_id="tu_1", spawn_depth=1)):
        rec.root_commit = lane.root_sha
        (lane.records / rec.name).write_bytes(format_record(rec, body))


@pytest.fixture
def corpus(tmp_path):
    """Two real repositories with stored sessions, and their environment (no daemon)."""
    env = env_for(tmp_path)
    home = Home(env["ABCD_HOME"])
    repos = {}
    for name, sessions in (("a", REPO_A), ("b", REPO_B)):
        path = tmp_path / f"repo-{name}"
        sha = make_repo(path, message=f"root {name}")
        lane = Lane(home, sha).ensure("records")
        for session, start in sessions:
            store_session(lane, session, start)
        repos[name] = (path, lane)
    (tmp_path / "out").mkdir()
    return env, repos, tmp_path / "out"


@pytest.fixture
def served(corpus, tmp_path):
    env = corpus[0]
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    yield corpus
    assert daemon.stop() == 0, daemon.read_log()


def abcd(env, *args, cwd, local=False):
    env = dict(env, ABCD_LOCAL="1") if local else env
    res = subprocess.run([str(ABCD), *args], env=env, cwd=cwd, capture_output=True, text=True,
                         timeout=120)
    return res.returncode, res.stdout, res.stderr


def test_all_writes_one_pair_per_session_of_this_repository_as_the_core_renders_it(served):
    env, repos, out = served
    path, lane = repos["a"]
    code, stdout, err = abcd(env, "history", "reconstruct", "--all", "--out", str(out), cwd=path)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted(
        n for s, _ in REPO_A for n in (f"{s}.md", f"{s}.telemetry.json"))
    for session, _ in REPO_A:
        local = reconstruct(lane, ReconstructOptions(session_id=session, max_block_bytes=8192),
                            now_ns=1)
        assert (out / f"{session}.md").read_bytes() == local.artefact
        assert json.loads((out / f"{session}.telemetry.json").read_text())["session_id"] == session
    assert "3 session(s) written" in stdout and "0 failed" in stdout
    assert stdout.splitlines()[0].split()[:3] == ["session", "repository", "agents"]


def test_all_repos_works_anywhere_and_since_narrows_it(served, tmp_path):
    env, repos, out = served
    code, stdout, err = abcd(env, "history", "reconstruct", "--all-repos", "--out", str(out),
                             "--json", cwd=tmp_path)
    assert code == 0, err
    written = {w["session_id"] for w in json.loads(stdout)["written"]}
    assert written == {s for s, _ in REPO_A + REPO_B}
    code, stdout, err = abcd(env, "history", "reconstruct", "--all-repos", "--since", "2099-01-01",
                             "--out", str(out), "--json", cwd=tmp_path)
    assert code == 0 and json.loads(stdout) == {"out": str(out), "written": [], "failed": []}


@pytest.mark.parametrize("local", [False, True], ids=["served", "in-process"])
def test_a_failing_session_is_named_the_rest_are_written_and_the_exit_is_1(corpus, tmp_path, local):
    env, repos, out = corpus
    daemon = None if local else DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        code, stdout, err = abcd(env, "history", "reconstruct", "33cc44dd", "no-such-session",
                                 REPO_A[0][0], "--out", str(out), cwd=repos["a"][0], local=local)
    finally:
        if daemon is not None:
            assert daemon.stop() == 0
    assert code == 1, err
    assert "session no-such-session: no session 'no-such-session' is stored" in err
    assert (out / f"{REPO_A[2][0]}.md").exists() and (out / f"{REPO_A[0][0]}.md").exists()
    assert "2 session(s) written" in stdout and "1 failed" in stdout


def test_an_ambiguous_prefix_is_refused_with_every_candidate(served):
    env, repos, out = served
    code, _, err = abcd(env, "history", "show", "11aa22bb", cwd=repos["a"][0])
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == "abcd: '11aa22bb' names 2 sessions; give more of the id"
    assert any(line.startswith(f"abcd:   {REPO_A[0][0]}  started 2026-01-01T00:00:00") for line in lines)
    assert any(line.startswith(f"abcd:   {REPO_A[1][0]}  started 2026-01-01T00:00:50") for line in lines)
    code, stdout, _ = abcd(env, "history", "reconstruct", "11aa22bb", "--out", str(out), "--json",
                           cwd=repos["a"][0])
    assert code == 2 and len(json.loads(stdout)["error"]["details"]) == 2


@pytest.mark.parametrize("local", [False, True], ids=["served", "in-process"])
def test_a_unique_prefix_works_for_show_list_and_reconstruct(corpus, tmp_path, local):
    env, repos, out = corpus
    path = repos["a"][0]
    daemon = None if local else DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        show = abcd(env, "history", "show", "33cc44", cwd=path, local=local)
        agent = abcd(env, "history", "show", "ag33cc4", cwd=path, local=local)
        listed = abcd(env, "history", "list", "--session", "33cc44dd", "--json", cwd=path, local=local)
        single = abcd(env, "history", "reconstruct", "33cc44dd", "--out", str(out), cwd=path,
                      local=local)
    finally:
        if daemon is not None:
            assert daemon.stop() == 0
    assert show[0] == 0 and f"session:    {REPO_A[2][0]}" in show[1]
    assert agent[0] == 0 and "agent:      agent ag33cc44" in agent[1]
    assert listed[0] == 0 and {r["session_id"] for r in json.loads(listed[1])} == {REPO_A[2][0]}
    assert single[0] == 0, single[2]
    assert (out / f"{REPO_A[2][0]}.md").exists()


@pytest.mark.parametrize("args", [
    ["--all", "--out", "-"],
    ["--all", REPO_A[0][0], "--out", "OUT"],
    [REPO_A[0][0], "--since", "2026-01-01", "--out", "OUT"],
    ["--all", "--since", "yesterday", "--out", "OUT"],
    ["--out", "OUT"],
    ["--all", "--out", "OUT/absent"],
])
def test_a_batch_refuses_what_it_cannot_do_as_bad_input(corpus, args):
    env, repos, out = corpus
    args = [a.replace("OUT", str(out)) for a in args]
    code, _, err = abcd(env, "history", "reconstruct", *args, cwd=repos["a"][0], local=True)
    assert code == 2 and err.startswith("abcd: ") and "Traceback" not in err
    assert list(out.iterdir()) == []


def test_a_batch_draws_a_progress_bar_on_a_terminal_and_none_when_piped(served):
    env, repos, out = served
    code, stdout, drawn = run_on_a_terminal(
        [str(ABCD), "history", "reconstruct", "--all-repos", "--out", str(out)], env)
    assert code == 0, drawn
    assert "writing" in drawn and "4/4 files" in drawn
    piped = abcd(env, "history", "reconstruct", "--all-repos", "--out", str(out), cwd=repos["a"][0])
    assert piped[0] == 0 and piped[2] == ""
