"""Installing the daemon as a user service: systemd user units or a launchd agent.

The unit templates are the files in the checkout's ``systemd/`` directory; rendering
substitutes the absolute path of this ``abcd`` executable (and, for launchd, the socket
and log paths). ``install`` writes the rendered files, reloads the manager and enables
the socket; ``uninstall`` reverses it. Both return the list of things they did, so the
CLI can print every step; a manager that cannot be reached (no user bus, no launchctl)
is reported, with the fallback (`abcd daemon start`), not hidden.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from abcd_daemon.errors import AbcdError
from abcd_daemon.paths import abcd_home, socket_path

TEMPLATES = Path(__file__).resolve().parent.parent / "systemd"
SYSTEMD_UNITS = ("abcd.socket", "abcd.service")
PLIST = "com.abcd.daemon.plist"


def abcd_executable() -> str:
    """Absolute path of the ``abcd`` console script running now (or on PATH)."""
    candidate = Path(sys.argv[0])
    if candidate.name == "abcd" and candidate.exists():
        return str(candidate.resolve())
    found = shutil.which("abcd")
    if found:
        return str(Path(found).resolve())
    beside = Path(sys.executable).with_name("abcd")
    if beside.exists():
        return str(beside)
    raise AbcdError("cannot find the abcd executable to put in the service unit",
                    hint="install abcd (pip install -e .) and run `abcd daemon install` from it")


def template(name: str) -> str:
    path = TEMPLATES / name
    if not path.is_file():
        raise AbcdError(f"the unit template {path} is missing",
                        hint="`abcd daemon install` runs from the source checkout (pip install -e .)")
    return path.read_text()


def render(name: str, *, abcd_bin: str, env=None) -> str:
    env = os.environ if env is None else env
    text = template(name).replace("@ABCD_BIN@", abcd_bin)
    text = text.replace("@SOCKET@", socket_path(env))
    text = text.replace("@LOG@", os.path.join(abcd_home(env), "daemon.log"))
    return text


def systemd_user_dir(env=None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user"


def launchd_dir() -> Path:
    return Path(os.path.expanduser("~")) / "Library" / "LaunchAgents"


def _run(cmd: list[str]) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return proc.returncode == 0, (proc.stderr or proc.stdout).strip()


def install(*, abcd_bin: str | None = None, enable: bool = True) -> list[str]:
    """Write and enable the service for this user. Returns the steps taken."""
    abcd_bin = abcd_bin or abcd_executable()
    steps = []
    if sys.platform == "darwin":
        target = launchd_dir()
        target.mkdir(parents=True, exist_ok=True)
        path = target / PLIST
        path.write_text(render(PLIST, abcd_bin=abcd_bin))
        steps.append(f"wrote {path}")
        if enable:
            ok, out = _run(["launchctl", "bootstrap", f"gui/{os.getuid()}", str(path)])
            steps.append("launchctl bootstrap: " + ("ok" if ok else f"FAILED ({out})"))
        return steps
    target = systemd_user_dir()
    target.mkdir(parents=True, exist_ok=True)
    for name in SYSTEMD_UNITS:
        path = target / name
        path.write_text(render(name, abcd_bin=abcd_bin))
        steps.append(f"wrote {path}")
    if enable:
        for cmd in (["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", "abcd.socket"]):
            ok, out = _run(cmd)
            steps.append(" ".join(cmd) + (": ok" if ok else f": FAILED ({out}); "
                         "the units are written — run `abcd daemon start` to run it without systemd"))
            if not ok:
                break
    return steps


def uninstall() -> list[str]:
    """Stop, disable and remove the service files. Returns the steps taken."""
    steps = []
    if sys.platform == "darwin":
        path = launchd_dir() / PLIST
        ok, out = _run(["launchctl", "bootout", f"gui/{os.getuid()}", str(path)])
        steps.append("launchctl bootout: " + ("ok" if ok else f"skipped ({out})"))
        if path.exists():
            path.unlink()
            steps.append(f"removed {path}")
        return steps
    ok, out = _run(["systemctl", "--user", "disable", "--now", "abcd.socket", "abcd.service"])
    steps.append("systemctl --user disable --now abcd.socket abcd.service: "
                 + ("ok" if ok else f"skipped ({out})"))
    for name in SYSTEMD_UNITS:
        path = systemd_user_dir() / name
        if path.exists():
            path.unlink()
            steps.append(f"removed {path}")
    _run(["systemctl", "--user", "daemon-reload"])
    return steps
