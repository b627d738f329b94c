"""``abcd daemon start``: run the daemon in the background, or say exactly why not.

Rules:
- Every refusal :func:`abcd_daemon.server.preflight.preflight` knows (a config error, a
  degraded scanner, ``ABCD_HOME`` a file, an over-long socket path) is found here, in
  this process, before anything is spawned: ``start`` prints the error line itself and
  exits non-zero. Hooks keep spooling meanwhile.
- The daemon logs to ``ABCD_HOME/daemon.log`` (rotated, owner-only; ``--log-file``).
  Its stdout and stderr go to ``ABCD_HOME/daemon.stderr`` (owner-only, emptied at each
  start): if it exits before it answers — a refusal only the running daemon can see,
  such as another daemon holding the lock — ``start`` prints the refusal it wrote there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from abcd_daemon.errors import AbcdError

from .connect import running

#: How long ``start`` waits for the new daemon to answer.
START_TIMEOUT_S = 15.0


def _private_file(path) -> int:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def refusal_from(stderr_text: str, returncode: int) -> AbcdError:
    """The error a daemon that exited at start wrote (``abcd: <message>`` then, maybe,
    ``abcd: <hint>``), or its last line when it wrote no such line."""
    lines = [ln for ln in stderr_text.splitlines() if ln.strip()]
    ours = [ln[len("abcd: "):] for ln in lines if ln.startswith("abcd: ")]
    if ours:
        return AbcdError(ours[0], hint=ours[1] if len(ours) > 1 else "")
    last = lines[-1] if lines else "it wrote nothing"
    return AbcdError(f"the daemon exited at start (status {returncode}): {last}")


def start_background(home, env=None) -> dict:
    """Start a daemon unless one answers. Returns what happened (``started``, ``pid``,
    and for a new one ``log`` and ``socket``). Raises AbcdError with the refusal."""
    from abcd_daemon.fsio.dirs import ensure_chain
    from abcd_daemon.paths import socket_path
    from abcd_daemon.server.preflight import preflight

    env = os.environ if env is None else env
    client = running(home)
    if client is not None:
        pid = client.welcome.pid
        client.close()
        return {"started": False, "pid": pid, "message": "already running"}
    preflight(home, env)
    ensure_chain(home.root)
    err_fd = _private_file(home.daemon_stderr)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "abcd_client", "daemon", "run", "--log-file", str(home.daemon_log)],
            stdin=subprocess.DEVNULL, stdout=err_fd, stderr=err_fd, start_new_session=True,
            close_fds=True, env=dict(env))
    finally:
        os.close(err_fd)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        client = running(home)
        if client is not None:
            client.close()
            return {"started": True, "pid": proc.pid, "log": str(home.daemon_log),
                    "socket": socket_path(env)}
        if proc.poll() is not None:
            text = home.daemon_stderr.read_text(errors="replace") if home.daemon_stderr.exists() else ""
            raise refusal_from(text, proc.returncode)
        time.sleep(0.05)
    raise AbcdError(f"the daemon did not answer within {START_TIMEOUT_S:.0f}s",
                    hint=f"see {home.daemon_log} and {home.daemon_stderr}")
