"""The daemon process: one instance, its socket, activation, peers, signals."""

from __future__ import annotations

import os
import pwd
import signal
import socket
import subprocess
import sys
import time

import pytest

from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

from .procs import DaemonProc, answers, env_for, wait_for


def test_a_second_daemon_refuses_to_start_and_leaves_the_first_alone(tmp_path):
    env = env_for(tmp_path)
    first = DaemonProc(env, tmp_path / "first.log").wait_ready()
    try:
        second = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "run"], env=env,
                                capture_output=True, timeout=30)
        assert second.returncode != 0
        assert b"another abcd daemon is running" in second.stderr
        assert answers(env)  # the live socket was not unlinked by the loser
    finally:
        assert first.stop() == 0


def test_a_stale_socket_is_reclaimed_by_the_lock_holder(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]), mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(env["ABCD_SOCKET"])
    stale.close()  # the file stays, nobody listens: what a crashed daemon leaves
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        assert answers(env)
        assert oct(os.stat(env["ABCD_SOCKET"]).st_mode & 0o777) == "0o600"
        assert oct(os.stat(os.path.dirname(env["ABCD_SOCKET"])).st_mode & 0o777) == "0o700"
    finally:
        assert daemon.stop() == 0
    assert not os.path.exists(env["ABCD_SOCKET"])  # its own socket is removed on exit


def test_something_other_than_a_socket_at_the_socket_path_is_refused(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]), mode=0o700)
    with open(env["ABCD_SOCKET"], "w") as f:
        f.write("precious")
    res = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "run"], env=env,
                         capture_output=True, timeout=30)
    assert res.returncode != 0 and b"is not a socket" in res.stderr
    assert open(env["ABCD_SOCKET"]).read() == "precious"


def test_sigterm_when_idle_exits_zero_promptly(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    t0 = time.monotonic()
    assert daemon.stop() == 0
    assert time.monotonic() - t0 < 5


def _nobody():
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user on this machine")


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
def test_another_uid_is_refused_and_logged(tmp_path):
    import tempfile

    # A socket directory another user can reach (pytest's tmp dirs are owner-only).
    public = tempfile.mkdtemp(prefix="abcd-uid-test-")
    env = env_for(tmp_path, ABCD_SOCKET=os.path.join(public, "run", "daemon.sock"))
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    nobody = _nobody()
    try:
        # Open the socket to everyone so only the daemon's own uid check stands in the way.
        os.chmod(public, 0o755)
        os.chmod(os.path.dirname(env["ABCD_SOCKET"]), 0o755)
        os.chmod(env["ABCD_SOCKET"], 0o666)
        probe = (
            "import socket,sys\n"
            "s=socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])\n"
            "try:\n"
            f"    s.sendall({encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION))!r})\n"
            "    print(len(s.recv(100)))\n"
            "except (ConnectionResetError, BrokenPipeError):\n"
            "    print(0)\n"
        )
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        res = subprocess.run([python, "-I", "-c", probe, env["ABCD_SOCKET"]], capture_output=True,
                             timeout=30, user=nobody.pw_uid, group=nobody.pw_gid, env={}, cwd="/")
        assert res.stdout.strip() == b"0", res.stderr  # closed without a Welcome
        wait_for(lambda: "refused a connection from uid %d" % nobody.pw_uid in daemon.read_log(),
                 what="the refusal in the log")
        assert answers(env)  # still serving its own user
    finally:
        assert daemon.stop() == 0
        import shutil

        shutil.rmtree(public, ignore_errors=True)


def test_a_silent_client_cannot_pin_a_handler(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        silent = [socket.socket(socket.AF_UNIX) for _ in range(20)]
        for s in silent:
            s.connect(env["ABCD_SOCKET"])
            s.sendall(b"\x00\x00")  # half a length prefix, then nothing
        t0 = time.monotonic()
        assert answers(env)
        assert time.monotonic() - t0 < 2
        for s in silent:
            s.settimeout(15)
            assert s.recv(10) == b""  # dropped at the request deadline
            s.close()
    finally:
        assert daemon.stop() == 0


def test_an_oversized_request_is_refused_and_the_daemon_keeps_serving(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(env["ABCD_SOCKET"])
        s.sendall(encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION)))
        s.settimeout(5)
        decoder = FrameDecoder()
        decoder.feed(s.recv(4096))
        assert isinstance(decoder.next_frame(), m.Welcome)
        s.sendall((512 << 20).to_bytes(4, "big"))
        while (refusal := decoder.next_frame()) is None:
            decoder.feed(s.recv(4096))
        assert isinstance(refusal, m.ErrorReply)
        assert refusal.message == (f"a frame of {512 << 20} bytes is over the {1 << 20}-byte "
                                   "limit; refused")
        assert s.recv(10) == b""  # then closed: the stream is desynchronised
        assert answers(env)
    finally:
        assert daemon.stop() == 0


def test_socket_activation_under_systemd_socket_activate(tmp_path):
    if not os.path.exists("/usr/bin/systemd-socket-activate"):
        pytest.skip("systemd-socket-activate is not installed")
    env = env_for(tmp_path)
    sock_path = env["ABCD_SOCKET"]
    os.makedirs(os.path.dirname(sock_path), mode=0o700)
    notify_path = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(20)
    env["NOTIFY_SOCKET"] = notify_path
    proc = subprocess.Popen(
        ["systemd-socket-activate", "-l", sock_path, "-E", "NOTIFY_SOCKET", "-E", "ABCD_HOME",
         "-E", "ABCD_SOCKET", "-E", "PATH", "-E", "TMPDIR",
         sys.executable, "-m", "abcd_client", "daemon", "run"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def first_connection():  # bind() creates the file a moment before listen()
            client = socket.socket(socket.AF_UNIX)
            try:
                client.connect(sock_path)
                return client
            except OSError:
                client.close()
                return None

        client = wait_for(first_connection, what="the activation socket")  # starts the daemon
        client.sendall(encode_frame(m.Hello(protocol=m.PROTOCOL_VERSION)))
        messages = []
        while not any(b"READY=1" in x for x in messages):
            messages.append(notify.recv(4096))
        client.settimeout(20)
        decoder = FrameDecoder()
        while (welcome := decoder.next_frame()) is None:
            decoder.feed(client.recv(4096))
        assert isinstance(welcome, m.Welcome)
        client.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert any(b"STOPPING=1" in notify.recv(4096) for _ in range(3))
        assert os.path.exists(sock_path)  # an inherited socket is never unlinked by the daemon
    finally:
        if proc.poll() is None:
            proc.kill()
        notify.close()


def test_sigterm_the_moment_the_socket_answers_still_exits_zero(tmp_path):
    env = env_for(tmp_path)
    for attempt in range(5):
        daemon = DaemonProc(env, tmp_path / f"d{attempt}.log")

        def connectable():
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(env["ABCD_SOCKET"])
                return True
            except OSError:
                return daemon.proc.poll() is not None
            finally:
                s.close()

        wait_for(connectable, what="the socket")
        assert daemon.stop() == 0, daemon.read_log()
        assert not os.path.exists(env["ABCD_SOCKET"])
