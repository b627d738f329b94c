"""Service units: they verify under the real systemd-analyze, carry the installing
shell's settings, are sandboxed (exposure ≤ 5.0) without losing what the daemon needs,
and install says what it did — and fails loudly when the service manager refuses."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from abcd_client import service

from ..daemon.procs import DaemonProc, env_for

ABCD = str(Path(sys.executable).with_name("abcd"))
needs_systemd = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd-analyze not installed (.ci/run installs it)")


def analyze(tmp_path, *args) -> subprocess.CompletedProcess:
    # systemd reads the user's socket units (gpg-agent's, …) as under XDG_RUNTIME_DIR,
    # and a socket path is capped at 108 bytes: the runtime directory must be short
    # however deep tmp_path is (a parallel worker's is deeper).
    with tempfile.TemporaryDirectory(prefix="abcd-rt-") as runtime:
        os.chmod(runtime, 0o700)
        return subprocess.run(["systemd-analyze", "--user", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, XDG_RUNTIME_DIR=runtime))


def default_env(tmp_path) -> dict:
    """A shell that set nothing but ABCD_HOME and PATH (the socket at its default)."""
    return {"ABCD_HOME": os.environ["ABCD_HOME"], "PATH": os.environ["PATH"], "HOME": str(tmp_path)}


def write_units(directory: Path, abcd_bin: str, env=None) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    units = {name: service.render(name, abcd_bin=abcd_bin, env=env) for name in service.SYSTEMD_UNITS}
    for name, text in units.items():
        (directory / name).write_text(text)
    return units


@needs_systemd
def test_rendered_units_pass_systemd_analyze_verify(tmp_path):
    units = write_units(tmp_path, ABCD, default_env(tmp_path))
    res = analyze(tmp_path, "verify", *service.SYSTEMD_UNITS)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    unit = units["abcd.service"]
    assert f'ExecStart="{ABCD}" daemon run' in unit and "Type=notify" in unit and "WatchdogSec=" in unit
    assert "StandardError=journal" in unit and "SyslogIdentifier=abcd" in unit
    sock = units["abcd.socket"]
    assert "SocketMode=0600" in sock and "DirectoryMode=0700" in sock
    assert "ListenStream=%t/abcd/daemon.sock" in sock  # = the daemon's default socket path


@needs_systemd
def test_a_unit_pointing_at_a_missing_binary_fails_verification(tmp_path):
    write_units(tmp_path, "/nonexistent/abcd")
    assert analyze(tmp_path, "verify", *service.SYSTEMD_UNITS).returncode != 0  # no rubber stamp


@needs_systemd
def test_a_checkout_path_with_a_space_percent_and_dollar_stays_one_runnable_executable(tmp_path):
    checkout = tmp_path / "my checkout 100% $HOME"
    checkout.mkdir()
    abcd = checkout / "abcd"
    abcd.write_text("#!/bin/sh\n")
    abcd.chmod(0o755)
    write_units(tmp_path / "units", str(abcd))
    res = analyze(tmp_path / "units", "verify", *service.SYSTEMD_UNITS)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    (tmp_path / "naive").mkdir()  # what an unquoted rendering does with the same path
    for name in service.SYSTEMD_UNITS:
        text = (tmp_path / "units" / name).read_text()
        (tmp_path / "naive" / name).write_text(text.replace(service.unit_quote(str(abcd)), str(abcd)))
    assert analyze(tmp_path / "naive", "verify", *service.SYSTEMD_UNITS).returncode != 0


def test_an_executable_path_systemd_cannot_run_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(service.AbcdError, match="which a systemd unit cannot carry"):
        service.render("abcd.service", abcd_bin='/opt/a"b/abcd', env={"ABCD_HOME": str(tmp_path)})


@needs_systemd
def test_the_units_carry_the_installing_shells_home_socket_and_path(tmp_path):
    env = {"ABCD_HOME": str(tmp_path / "my home"), "ABCD_SOCKET": str(tmp_path / "run dir" / "d.sock"),
           "PATH": "/opt/git 2/bin:/usr/bin:/bin", "HOME": str(tmp_path)}
    units = write_units(tmp_path / "units", ABCD, env)
    res = analyze(tmp_path / "units", "verify", *service.SYSTEMD_UNITS)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    unit = units["abcd.service"]
    assert f'Environment="ABCD_HOME={tmp_path}/my home"' in unit
    assert f'Environment="ABCD_SOCKET={tmp_path}/run dir/d.sock"' in unit
    assert 'Environment="PATH=/opt/git 2/bin:/usr/bin:/bin"' in unit
    assert f'ReadWritePaths="{tmp_path}/my home" "{tmp_path}/.cache/abcd" "{tmp_path}/run dir"' in unit
    assert f"ListenStream={tmp_path}/run dir/d.sock" in units["abcd.socket"]


@needs_systemd
def test_the_service_is_sandboxed_to_an_exposure_of_at_most_5_and_keeps_what_the_daemon_needs(tmp_path):
    units = write_units(tmp_path, ABCD, default_env(tmp_path))
    res = analyze(tmp_path, "security", "--offline=true", "abcd.service")
    assert res.returncode == 0, res.stderr
    exposure = float(re.search(r"Overall exposure level for abcd\.service: ([0-9.]+)", res.stdout)[1])
    print(f"\nsystemd-analyze security exposure: {exposure} (was 9.6 unhardened)")
    assert exposure <= 5.0
    assert analyze(tmp_path, "security", "--offline=true", "--threshold=50",
                   "abcd.service").returncode == 0
    # What the daemon needs survives the sandbox: transcripts anywhere in the home
    # (~/.claude) and the user's checkouts for git stay readable; the store and the
    # socket directory writable; /tmp shared (the hooks' fallback spool); AF_UNIX allowed.
    assert "Service has read-only access to home directories" in res.stdout
    unit = units["abcd.service"]
    assert "ProtectHome=read-only" in unit and "PrivateTmp" not in unit
    assert re.search(r"^ReadWritePaths=.*\"%s\".* %%t/abcd$" % re.escape(
        os.path.abspath(os.environ["ABCD_HOME"])), unit, re.M)
    assert "RestrictAddressFamilies=AF_UNIX" in unit
    # Only options a user manager honours (systemd.exec(5): "not supported for services
    # running in per-user instances"); anything else would be a score without a sandbox.
    for unsupported in ("ProtectProc=", "ProcSubset=", "ProtectControlGroups=", "RemoveIPC=",
                        "IPAddressDeny=", "DevicePolicy=", "User=", "DynamicUser="):
        assert unsupported not in unit
    assert "PrivateUsers=yes" in unit  # what lets a user manager build the namespaces


def test_launchd_plist_is_valid_names_the_socket_and_carries_the_environment(tmp_path):
    env = {"ABCD_HOME": str(tmp_path / "a&b home"), "ABCD_SOCKET": str(tmp_path / "run" / "daemon.sock"),
           "ABCD_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    plist = plistlib.loads(service.render(service.PLIST, abcd_bin=ABCD, env=env).encode())
    assert plist["ProgramArguments"] == [ABCD, "daemon", "run", "--log-file",
                                         str(tmp_path / "a&b home" / "daemon.log")]
    assert plist["EnvironmentVariables"] == env
    listener = plist["Sockets"]["Listeners"]
    assert listener["SockPathName"] == env["ABCD_SOCKET"] and listener["SockPathMode"] == 0o600


def test_install_without_enabling_writes_the_units_and_uninstall_removes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    steps = service.install(abcd_bin=ABCD, enable=False)
    unit_dir = tmp_path / "config" / "systemd" / "user"
    assert f'"{ABCD}"' in (unit_dir / "abcd.service").read_text()
    assert [s for s in steps if s.startswith("wrote ")] == [
        f"wrote {unit_dir / 'abcd.socket'}", f"wrote {unit_dir / 'abcd.service'}"]
    assert os.path.isdir(os.environ["ABCD_HOME"])  # the sandbox can only grant what exists
    steps = service.uninstall()
    assert not (unit_dir / "abcd.service").exists() and not (unit_dir / "abcd.socket").exists()
    assert any(s.startswith("removed ") for s in steps)


def test_install_exits_non_zero_with_systemctls_own_error_when_it_refuses(tmp_path):
    """The real ``systemctl --user``: with no user manager to talk to (CI, this
    container), or with units it cannot find in its own search path, it refuses — and
    install must say so and exit 1, not report success."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"),
               DBUS_SESSION_BUS_ADDRESS="unix:path=" + str(tmp_path / "no-bus"),
               XDG_RUNTIME_DIR=str(tmp_path / "no-runtime"))
    res = subprocess.run([ABCD, "daemon", "install"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    assert re.search(r"^abcd: systemctl --user \S+.* failed: \S", res.stderr, re.M), res.stderr
    assert "abcd daemon start" in res.stderr  # the way to run it meanwhile
    assert "wrote " in res.stderr  # the steps done before the refusal are reported
    assert (tmp_path / "config" / "systemd" / "user" / "abcd.service").exists()


def test_the_daemon_notifies_ready_and_pings_the_watchdog(tmp_path):
    notify_path = str(tmp_path / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    notify.settimeout(20)
    env = env_for(tmp_path, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="200000")
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        seen = []
        while seen.count(b"WATCHDOG=1") < 3:
            seen.append(notify.recv(4096))
        assert b"READY=1" in seen
    finally:
        assert daemon.stop() == 0
        notify.close()


#: Run a command with the filesystem read-only except the given paths, and no network:
#: what ProtectSystem=/ProtectHome=read-only + ReadWritePaths= + PrivateNetwork= make
#: of the world (run inside ``unshare --user --map-root-user --mount --net``).
_SANDBOX = """
import os, subprocess, sys
MOUNT = "%s"
args = sys.argv[1:]
cut = args.index("--")
for step in (["--make-rprivate", "/"], *(["--bind", p, p] for p in args[:cut]),
             ["-o", "remount,bind,ro", "/"]):
    subprocess.run([MOUNT, *step], check=True)
os.execv(args[cut + 1], args[cut + 1:])
""" % (shutil.which("mount") or "/bin/mount")


def _unit_values(unit: str, key: str) -> list[str]:
    """The words of every ``key=`` line, unquoted as systemd reads them."""
    import shlex

    words = []
    for line in unit.splitlines():
        if line.startswith(key + "="):
            words += [w.replace("%%", "%") for w in shlex.split(line[len(key) + 1:])]
    return words


@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) not installed")
def test_inside_the_units_sandbox_the_daemon_reads_the_home_runs_git_and_stores(tmp_path):
    """The unit's own settings, applied: everything read-only but its ReadWritePaths, no
    network, only the environment it carries. A hook's transcript under ~/.claude and
    the checkout stay readable, git runs, and the record is stored."""
    from ..conftest import make_repo
    from ..daemon.procs import answers, run_shim, wait_for

    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--net", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no unprivileged mount namespaces here ({probe.stderr.decode().strip()})")
    user_home = tmp_path / "user"
    # (a cache of its own, cold: the sandboxed daemon must be able to keep what it compiles)
    env = env_for(tmp_path, HOME=str(user_home), ABCD_HOME=str(user_home / ".abcd"),
                  ABCD_CACHE=str(user_home / ".cache" / "abcd"))
    repo = user_home / "src" / "project"
    sha = make_repo(repo)
    session = "5a9221e2-0000-4000-8000-00000000b0c5"
    project = user_home / ".claude" / "projects" / "-src-project"
    project.mkdir(parents=True)
    transcript = project / f"{session}.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"inside"}}\n')
    unit = service.render("abcd.service", abcd_bin=ABCD, env=env)
    os.makedirs(service.service_environment(env)["ABCD_HOME"], mode=0o700)  # as install does
    os.makedirs(service.service_environment(env)["ABCD_CACHE"], mode=0o700)
    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]), mode=0o700)  # as the socket unit does
    writable = _unit_values(unit, "ReadWritePaths")
    assert env["ABCD_HOME"] in writable
    carried = dict(w.split("=", 1) for w in _unit_values(unit, "Environment"))
    daemon_env = {"HOME": env["HOME"], **carried}  # what the user manager passes, plus the unit's
    log = open(tmp_path / "sandboxed.log", "wb")
    proc = subprocess.Popen([shutil.which("unshare"), "--user", "--map-root-user", "--mount", "--net", "--",
                             sys.executable, "-c", _SANDBOX, *writable, "--",
                             sys.executable, "-m", "abcd_client", "daemon", "run", "-v"],
                            env=daemon_env, stdout=log, stderr=log)
    try:
        wait_for(lambda: answers(env) or proc.poll() is not None, what="the sandboxed daemon",
                 timeout=60)  # its first start compiles the gate: slow on a busy machine
        assert proc.poll() is None, (tmp_path / "sandboxed.log").read_text()
        payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(transcript), "reason": "exit"}
        assert run_shim("session-end", payload, env).returncode == 0
        records = Path(env["ABCD_HOME"]) / "transcripts" / sha / "records"
        wait_for(lambda: records.is_dir() and any(records.glob("*.md")), 60,
                 what="the record, stored from inside the sandbox")
        # The cache is writable inside the sandbox: the converted ruleset and the gate
        # compiled for that first capture are kept for the next start.
        cache = Path(env["ABCD_CACHE"])
        wait_for(lambda: any(cache.glob("gate-*.hsdb")), 60, what="the gate, kept in the cache")
    finally:
        proc.terminate()
        assert proc.wait(30) == 0, (tmp_path / "sandboxed.log").read_text()
        log.close()
    assert b"inside" in next(records.glob("*.md")).read_bytes()
