"""Installing the daemon as a user service: systemd user units or a launchd agent.

The unit templates are the files in the checkout's ``systemd/`` directory. Rendering
fills in, from the environment ``abcd daemon install`` runs in:
- the absolute path of this ``abcd`` executable, quoted for the unit syntax (a path
  with a space, ``%``, ``$``, ``"`` or ``\\`` stays one word meaning what it says);
- the settings the daemon must share with the hooks and the CLI: ``ABCD_HOME`` and
  ``ABCD_CACHE`` (always, made absolute: the compiled ruleset and gate the CLI's
  ``abcd redact`` also reads), ``PATH`` (the daemon runs git), and ``ABCD_SOCKET`` /
  ``TMPDIR`` when set — without them a service-run daemon would use another store or
  socket than the user's shell;
- the directories the sandboxed service may write (``ABCD_HOME``, the cache, the
  socket's directory) and the socket path. (Without the cache, every service start
  converted the ruleset again and its first capture compiled the gate again.)
``install`` writes the rendered files, creates ``ABCD_HOME`` and the cache (the
sandbox can only grant an existing directory), reloads the manager and enables the socket; a manager
that refuses raises :class:`InstallFailed` carrying its own error and the steps done.
``uninstall`` reverses it and reports what it skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

from abcd_daemon.errors import AbcdError
from abcd_daemon.fsio.dirs import ensure_chain
from abcd_daemon.paths import DAEMON_LOG, DAEMON_STDERR, abcd_home, cache_dir, socket_path

TEMPLATES = Path(__file__).resolve().parent.parent / "systemd"
SYSTEMD_UNITS = ("abcd.socket", "abcd.service")
PLIST = "com.abcd.daemon.plist"
#: The daemon's default socket under systemd: ``$XDG_RUNTIME_DIR/abcd/daemon.sock``
#: (:func:`abcd_daemon.paths.socket_path`), written with the runtime-dir specifier.
DEFAULT_LISTEN = "%t/abcd/daemon.sock"
#: Variables carried into the units when they are set (ABCD_HOME is always carried).
CARRIED = ("ABCD_SOCKET", "PATH", "TMPDIR")


class InstallFailed(AbcdError):
    """The service manager refused a step; ``steps`` lists what was done before."""

    def __init__(self, message: str, *, steps: list[str], hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.steps = steps


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


def unit_specifiers(text: str) -> str:
    """``text`` with systemd's specifier character escaped (``%`` → ``%%``)."""
    return text.replace("%", "%%")


def unit_quote(word: str) -> str:
    """One double-quoted word of a unit setting: backslash and quote escaped, ``%``
    doubled. (``$`` needs no escape in the words abcd writes: an ExecStart executable
    and Environment= values are not variable-expanded.)"""
    return '"' + unit_specifiers(word.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def check_unit_word(what: str, word: str, *, executable: bool = False) -> str:
    """Refuse what no unit file can carry: a control character (a line break would end
    the setting), and in the executable a quote or backslash, which systemd refuses to
    run ("Executable name contains special characters")."""
    bad = [c for c in word if ord(c) < 0x20 or ord(c) == 0x7F]
    if executable:
        bad += [c for c in word if c in "\\\"'"]
    if bad:
        raise AbcdError(f"{what} {word!r} contains {bad[0]!r}, which a systemd unit cannot carry",
                        hint="install abcd at (or point this variable to) a path without it")
    return word


def service_environment(env) -> dict[str, str]:
    """The variables the units carry (see module docstring)."""
    carried = {"ABCD_HOME": os.path.abspath(abcd_home(env)), "ABCD_CACHE": os.path.abspath(cache_dir(env))}
    carried.update({name: env[name] for name in CARRIED if env.get(name)})
    for name, value in carried.items():
        check_unit_word(name, value)
    return carried


def _socket_dir(env) -> str:
    return os.path.dirname(socket_path(env)) if env.get("ABCD_SOCKET") else "%t/abcd"


def render(name: str, *, abcd_bin: str, env=None) -> str:
    env = os.environ if env is None else env
    carried = service_environment(env)
    text = template(name)
    if name == PLIST:
        fields = {
            "@ABCD_BIN@": xml_escape(abcd_bin),
            "@SOCKET@": xml_escape(socket_path(env)),
            "@LOG@": xml_escape(os.path.join(carried["ABCD_HOME"], DAEMON_LOG)),
            "@STDERR@": xml_escape(os.path.join(carried["ABCD_HOME"], DAEMON_STDERR)),
            "@ENVIRONMENT@": "\n".join(f"    <key>{xml_escape(k)}</key>\n    <string>{xml_escape(v)}</string>"
                                       for k, v in carried.items()),
        }
    else:
        socket_dir = _socket_dir(env)
        check_unit_word("the abcd executable's path", abcd_bin, executable=True)
        fields = {
            "@EXEC_START@": f"{unit_quote(abcd_bin)} daemon run",
            "@ENVIRONMENT@": "\n".join(f"Environment={unit_quote(f'{k}={v}')}"
                                       for k, v in carried.items()),
            "@READ_WRITE_PATHS@": " ".join([unit_quote(carried["ABCD_HOME"]), unit_quote(carried["ABCD_CACHE"]),
                                            socket_dir if socket_dir == "%t/abcd" else unit_quote(socket_dir)]),
            "@LISTEN@": unit_specifiers(socket_path(env)) if env.get("ABCD_SOCKET") else DEFAULT_LISTEN,
        }
    for field, value in fields.items():
        text = text.replace(field, value)
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


def _manage(steps: list[str], commands: list[list[str]], where: Path) -> None:
    for cmd in commands:
        ok, out = _run(cmd)
        shown = " ".join(cmd)
        if not ok:
            raise InstallFailed(f"{shown} failed: {out or 'no output'}", steps=steps,
                                hint=f"the unit files are written in {where}; fix the service "
                                     "manager and run `abcd daemon install` again, or run the "
                                     "daemon without it: `abcd daemon start`")
        steps.append(f"{shown}: ok")


def install(*, abcd_bin: str | None = None, enable: bool = True, env=None) -> list[str]:
    """Write and enable the service for this user. Returns the steps taken; raises
    InstallFailed when the service manager refuses."""
    env = os.environ if env is None else env
    abcd_bin = abcd_bin or abcd_executable()
    carried = service_environment(env)
    ensure_chain(carried["ABCD_HOME"])
    ensure_chain(carried["ABCD_CACHE"])
    steps: list[str] = []
    if sys.platform == "darwin":
        target = launchd_dir()
        target.mkdir(parents=True, exist_ok=True)
        path = target / PLIST
        path.write_text(render(PLIST, abcd_bin=abcd_bin, env=env))
        steps.append(f"wrote {path}")
        if enable:
            _manage(steps, [["launchctl", "bootstrap", f"gui/{os.getuid()}", str(path)]], target)
        return steps
    target = systemd_user_dir(env)
    target.mkdir(parents=True, exist_ok=True)
    for name in SYSTEMD_UNITS:
        path = target / name
        path.write_text(render(name, abcd_bin=abcd_bin, env=env))
        steps.append(f"wrote {path}")
    if enable:
        _manage(steps, [["systemctl", "--user", "daemon-reload"],
                        ["systemctl", "--user", "enable", "--now", "abcd.socket"]], target)
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
