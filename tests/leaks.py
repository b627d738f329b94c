"""No test file leaves a daemon running: the guard behind the root conftest's
``no_daemon_left_behind`` fixture.

A daemon process is "this run's" when its ``ABCD_HOME`` (read from
``/proc/<pid>/environ``) lies under this pytest process's base temp directory — every
test's home does (``abcd_env``, ``env_for``), and each xdist worker has its own base, so
one worker never blames the other's running daemons. A leaked daemon holds its store, its
socket and a share of a 2-core CI machine for the rest of the suite, and was once found
still running after a CI run.

Linux only (``/proc``); elsewhere :func:`daemons_under` finds nothing.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _environ(pid: str) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    out = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            out[key.decode(errors="replace")] = value.decode(errors="replace")
    return out


def daemons_under(base: Path) -> dict[int, str]:
    """Live ``daemon run`` processes whose ABCD_HOME is under ``base``: pid → command line."""
    base_s = str(base).rstrip("/") + "/"
    found = {}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return {}
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if not any(a.endswith("abcd_client") or a.endswith("abcd") for a in args):
            continue
        if "daemon" not in args or "run" not in args[args.index("daemon"):]:
            continue
        home = _environ(pid).get("ABCD_HOME", "")
        if (home.rstrip("/") + "/").startswith(base_s):
            found[int(pid)] = f"{' '.join(args)} (ABCD_HOME={home})"
    return found


def stop_all(pids, grace: float = 10.0) -> None:
    """SIGTERM each of ``pids``, then SIGKILL whatever still runs after ``grace``."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        for pid in list(alive):
            if not _running(pid):
                alive.discard(pid)
        time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie — exited, not yet reaped by its parent — does not)."""
    try:
        os.waitpid(pid, os.WNOHANG)  # our own child: reap it
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
