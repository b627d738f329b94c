"""The CLI talks to this store's daemon only, and never mistakes a busy daemon for none."""

from __future__ import annotations

import json
import os

import pytest

from abcd_daemon.config import Config
from abcd_daemon.paths import Home
from abcd_daemon.queue.stage import stage
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, wedged_listener


def _stage_one(home: str, sha: str, session: str) -> None:
    stage(Lane(Home(home), sha), b'{"type":"user","message":{"content":"x"}}\n',
          CaptureMeta(session_id=session), config=Config(), now_ns=1_767_225_600 * 10**9)


def test_a_cli_of_another_store_says_so_and_works_in_process_on_its_own(tmp_path, cli):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        mine = str(tmp_path / "my-home")
        _stage_one(mine, sha, "mine-only")
        code, out, err = cli("history", "staged", "--json", cwd=repo, env=dict(env, ABCD_HOME=mine))
        assert code == 0, err
        assert (f"serves the store {os.path.realpath(env['ABCD_HOME'])}, not this ABCD_HOME "
                f"({mine}); working in-process on {mine} instead") in err
        assert [e["session_id"] for e in json.loads(out)["staged"]] == ["mine-only"]
        # the JSON client (a served search) keeps to the same rule
        code, out, err = cli("search", "anything", "--json", cwd=repo, env=dict(env, ABCD_HOME=mine))
        assert code == 0, err
        assert "not this ABCD_HOME" in err and f"working in-process on {mine} instead" in err
        assert json.loads(out) == {"query": "anything", "hits": []}
    finally:
        assert daemon.stop() == 0


def test_daemon_status_from_another_store_refuses_instead_of_showing_that_store(tmp_path, cli):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        code, out, err = cli("daemon", "status", env=dict(env, ABCD_HOME=str(tmp_path / "other")))
        assert code == 1
        assert f"(pid {daemon.proc.pid}) serves the store" in err and "not this ABCD_HOME" in err
        assert "running (pid" not in out
        code, out, _ = cli("daemon", "status", "--json", env=env)  # its own store: shown
        assert code == 0 and json.loads(out)["running"] is True
    finally:
        assert daemon.stop() == 0


def test_a_busy_daemon_is_reported_busy_not_absent(tmp_path, cli):
    env = env_for(tmp_path)
    held = wedged_listener(env)
    try:
        code, out, err = cli("daemon", "status", env=env)
        assert code == 1  # not 3, "not running"
        assert "is too busy to take a connection (its listen queue stayed full for 2s)" in err
        assert "not running" not in out
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("verb", [["history", "list"], ["search", "anything"], ["search", "x", "--json"]])
def test_a_read_verb_against_a_busy_daemon_refuses_rather_than_guessing(verb, tmp_path, cli):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    make_repo(repo)
    held = wedged_listener(env)
    try:
        code, _, err = cli(*verb, cwd=repo, env=env)
        assert code == 1 and "too busy to take a connection" in err
        assert "run the command again in a moment" in err
    finally:
        for s in held:
            s.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
@pytest.mark.parametrize("verb", [["search", "private words", "--all-repos"], ["search", "x", "--json"],
                                  ["history", "list"], ["daemon", "status"]])
def test_a_socket_served_by_another_uid_is_refused_before_a_byte_is_sent(verb, tmp_path, cli):
    """A listener of another user at ABCD_SOCKET (a squatted /tmp path) is not this
    user's daemon: the CLI refuses it, for the JSON and the msgpack client alike, and
    sends it nothing — neither a query nor a Hello."""
    import pwd
    import shutil
    import subprocess
    import sys
    import tempfile

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user on this machine")
    public = tempfile.mkdtemp(prefix="abcd-squat-test-")
    os.chmod(public, 0o777)
    sock = os.path.join(public, "daemon.sock")
    listener = (
        "import socket,sys,os\n"
        "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(4)\n"
        "print('ready', flush=True)\n"
        "c,_=s.accept(); c.settimeout(3)\n"
        "try:\n    data=c.recv(100)\nexcept OSError:\n    data=b''\n"
        "print(len(data), flush=True)\n"
    )
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    squatter = subprocess.Popen([python, "-I", "-c", listener, sock], stdout=subprocess.PIPE,
                                user=nobody.pw_uid, group=nobody.pw_gid, env={}, cwd="/")
    try:
        assert squatter.stdout.readline().strip() == b"ready"
        env = env_for(tmp_path, ABCD_SOCKET=sock)
        repo = tmp_path / "repo"
        make_repo(repo)
        code, out, err = cli(*verb, cwd=repo, env=env)
        assert code == 1, (out, err)
        assert f"the socket {sock} is served by uid {nobody.pw_uid}, not by you" in err
        assert "Traceback" not in err and "private words" not in out
        assert squatter.communicate(timeout=10)[0].strip() == b"0"  # it received nothing
    finally:
        squatter.kill()
        squatter.wait()
        shutil.rmtree(public, ignore_errors=True)
