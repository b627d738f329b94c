"""One daemon per socket and per store; the socket directory is never taken over."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from abcd_daemon.server.instance import listen_backlog

from ..daemon.procs import DaemonProc, answers, env_for


def run_daemon(env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "run"], env=env,
                          capture_output=True, timeout=60)


@pytest.fixture
def shared_dir():
    """A world-writable sticky directory outside pytest's owner-only tmp tree, as /tmp is."""
    path = tempfile.mkdtemp(prefix="abcd-shared-")
    os.chmod(path, 0o1777)
    yield path
    subprocess.run(["rm", "-rf", path])


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --------------------------------------------------------------------------- the socket dir


def test_a_socket_in_a_world_writable_directory_is_refused_and_the_directory_left_as_it_was(
        tmp_path, shared_dir):
    env = env_for(tmp_path, ABCD_SOCKET=os.path.join(shared_dir, "x.sock"))
    res = run_daemon(env)
    assert res.returncode == 1
    assert (f"the socket directory '{shared_dir}' is group- or world-writable (mode 0o1777); "
            "refusing to put the daemon's socket there").encode() in res.stderr
    assert _mode(shared_dir) == 0o1777  # before: chmodded to 0700, locking everyone else out
    assert os.listdir(shared_dir) == []


def test_a_socket_directory_another_user_owns_is_refused(tmp_path, shared_dir, other_user):
    theirs = os.path.join(shared_dir, "theirs")
    os.mkdir(theirs, 0o755)
    other_user.owns(theirs)
    env = env_for(tmp_path, ABCD_SOCKET=os.path.join(theirs, "daemon.sock"))
    res = run_daemon(env)
    assert res.returncode == 1
    assert (f"the socket directory '{theirs}' is owned by uid {other_user.uid}, not by this "
            "user").encode() in res.stderr
    assert _mode(theirs) == 0o755 and os.listdir(theirs) == []


def test_an_existing_socket_directory_of_ours_is_used_as_it_is(tmp_path):
    env = env_for(tmp_path)
    sock_dir = os.path.dirname(env["ABCD_SOCKET"])
    os.makedirs(sock_dir)
    os.chmod(sock_dir, 0o755)  # ours, readable by others, writable by nobody else
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        assert _mode(sock_dir) == 0o755
        assert _mode(env["ABCD_SOCKET"]) == 0o600
    finally:
        assert daemon.stop() == 0


def test_a_missing_socket_directory_is_created_owner_only(tmp_path):
    env = env_for(tmp_path, ABCD_SOCKET=str(tmp_path / "new" / "deeper" / "daemon.sock"))
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        assert _mode(tmp_path / "new" / "deeper") == 0o700
    finally:
        assert daemon.stop() == 0


# --------------------------------------------------------------------------- one per store


def test_a_second_daemon_on_the_same_store_with_another_socket_is_refused(tmp_path):
    env = env_for(tmp_path)
    first = DaemonProc(env, tmp_path / "first.log").wait_ready()
    try:
        # As when one is started without XDG_RUNTIME_DIR and one with it: two sockets.
        other = dict(env, ABCD_SOCKET=str(tmp_path / "elsewhere" / "daemon.sock"))
        res = run_daemon(other)
        assert res.returncode == 1
        assert b"another abcd daemon is running on this store" in res.stderr
        assert f"{env['ABCD_HOME']}/daemon.lock, pid {first.proc.pid}".encode() in res.stderr
        assert not os.path.exists(other["ABCD_SOCKET"])  # it never listened
        assert answers(env)
    finally:
        assert first.stop() == 0


def test_a_second_daemon_on_the_same_socket_with_another_store_is_refused(tmp_path):
    env = env_for(tmp_path)
    first = DaemonProc(env, tmp_path / "first.log").wait_ready()
    try:
        res = run_daemon(dict(env, ABCD_HOME=str(tmp_path / "other-home")))
        assert res.returncode == 1
        assert b"another abcd daemon is running on this socket" in res.stderr
        assert answers(env)
    finally:
        assert first.stop() == 0


# --------------------------------------------------------------------------- bursts


def test_the_socket_listens_with_the_systems_maximum_backlog():
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            system = int(f.read())
    except OSError:
        system = socket.SOMAXCONN
    assert listen_backlog() == max(system, socket.SOMAXCONN)


def test_a_burst_of_200_connections_to_a_stalled_daemon_all_queue_and_are_served(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    queued = []
    try:
        os.kill(daemon.proc.pid, signal.SIGSTOP)  # accepts nothing while the burst arrives
        try:
            refused = 0
            for _ in range(200):
                s = socket.socket(socket.AF_UNIX)
                s.setblocking(False)
                try:
                    s.connect(env["ABCD_SOCKET"])  # a full queue says EAGAIN here
                    queued.append(s)
                except BlockingIOError:
                    refused += 1
                    s.close()
            assert refused == 0  # before: the 129th and later got EAGAIN (listen(128))
        finally:
            os.kill(daemon.proc.pid, signal.SIGCONT)
        for s in queued:
            s.setblocking(True)
            s.settimeout(30)
            s.shutdown(socket.SHUT_WR)  # a doorbell: connect, say nothing, close
            assert s.recv(10) == b""
        assert answers(env)
    finally:
        for s in queued:
            s.close()
        assert daemon.stop() == 0
