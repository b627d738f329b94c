"""Real processes for daemon tests: the daemon, the shim, a client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "hooks" / "abcd-hook"


def env_for(base: Path, **extra) -> dict:
    env = dict(os.environ)
    env.pop("XDG_RUNTIME_DIR", None)
    env.update(ABCD_HOME=str(base / "home"), ABCD_SOCKET=str(base / "run" / "daemon.sock"),
               TMPDIR=str(base / "tmp"), CLAUDE_CONFIG_DIR=str(base / "claude"))
    (base / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra)
    return env


def wait_for(predicate, timeout=20.0, interval=0.02, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def answers(env) -> bool:
    from abcd_client.connect import connect
    from abcd_daemon.errors import DaemonUnavailable

    old = {k: os.environ.get(k) for k in ("ABCD_SOCKET", "ABCD_HOME")}
    try:
        with connect(env["ABCD_SOCKET"], timeout=0.5):
            return True
    except DaemonUnavailable:
        return False
    finally:
        for k, v in old.items():
            if v is not None:
                os.environ[k] = v


class DaemonProc:
    def __init__(self, env, log_path: Path, extra_args=()) -> None:
        self.env = env
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "abcd_client", "daemon", "run", "-v", *extra_args],
            env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def wait_ready(self, timeout=20.0):
        """Wait until the daemon answers; returns self. A daemon that exited or did not
        answer in time is stopped before the failure is raised (with its log), so no
        caller leaks it."""
        try:
            wait_for(lambda: answers(self.env) or self.proc.poll() is not None, timeout, what="daemon")
            assert self.proc.poll() is None, f"the daemon exited ({self.proc.returncode})"
        except BaseException as exc:
            self.stop()
            if isinstance(exc, AssertionError):
                raise AssertionError(f"{exc}\ndaemon log:\n{self.read_log()}") from None
            raise
        return self

    def read_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout=30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.log.close()


def run_shim(event: str, payload, env, *, timeout=10.0, cwd=None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([str(SHIM), event], input=data, env=env, capture_output=True,
                          timeout=timeout, cwd=cwd)


def shim_log(env) -> list[str]:
    path = Path(env["ABCD_HOME"]) / "spool" / "shim.log"
    return path.read_text().splitlines() if path.exists() else []


def wedged_listener(env) -> list:
    """A listener at the socket path that never accepts, its queue filled until the
    kernel answers EAGAIN: a daemon too busy to take a connection. Returns the sockets
    to close (the listener first)."""
    import socket

    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]), mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(env["ABCD_SOCKET"])
    listener.listen(0)
    held = [listener]
    while True:
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        try:
            s.connect(env["ABCD_SOCKET"])
        except BlockingIOError:
            s.close()
            return held
        held.append(s)
