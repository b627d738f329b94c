"""Service units: they verify under systemd, and install/uninstall say what they did."""

from __future__ import annotations

import os
import plistlib
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_client import service

from ..daemon.procs import DaemonProc, env_for

ABCD = str(Path(sys.executable).with_name("abcd"))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_rendered_units_pass_systemd_analyze_verify(tmp_path):
    for name in service.SYSTEMD_UNITS:
        (tmp_path / name).write_text(service.render(name, abcd_bin=ABCD))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    res = subprocess.run(["systemd-analyze", "--user", "verify", *service.SYSTEMD_UNITS],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    assert res.returncode == 0, res.stderr
    unit = (tmp_path / "abcd.service").read_text()
    assert f"ExecStart={ABCD} daemon run" in unit and "Type=notify" in unit and "WatchdogSec=" in unit
    sock = (tmp_path / "abcd.socket").read_text()
    assert "SocketMode=0600" in sock and "DirectoryMode=0700" in sock
    assert "ListenStream=%t/abcd/daemon.sock" in sock  # = the daemon's default socket path


def test_a_unit_pointing_at_a_missing_binary_fails_verification(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze not installed")
    (tmp_path / "abcd.service").write_text(service.render("abcd.service", abcd_bin="/nonexistent/abcd"))
    (tmp_path / "abcd.socket").write_text(service.render("abcd.socket", abcd_bin=ABCD))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    res = subprocess.run(["systemd-analyze", "--user", "verify", "abcd.socket", "abcd.service"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, XDG_RUNTIME_DIR=str(runtime)))
    assert res.returncode != 0  # the check above is not a rubber stamp


def test_launchd_plist_is_valid_and_names_the_socket(tmp_path):
    env = {"ABCD_HOME": str(tmp_path / "home"), "ABCD_SOCKET": str(tmp_path / "run" / "daemon.sock")}
    plist = plistlib.loads(service.render(service.PLIST, abcd_bin=ABCD, env=env).encode())
    assert plist["ProgramArguments"] == [ABCD, "daemon", "run"]
    listener = plist["Sockets"]["Listeners"]
    assert listener["SockPathName"] == env["ABCD_SOCKET"] and listener["SockPathMode"] == 0o600


def test_install_writes_the_units_and_uninstall_removes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    steps = service.install(abcd_bin=ABCD, enable=True)
    unit_dir = tmp_path / "config" / "systemd" / "user"
    assert (unit_dir / "abcd.service").read_text().count(ABCD) == 1
    assert any(s.startswith("wrote ") for s in steps)
    assert any("systemctl --user" in s for s in steps)  # enabling is attempted and reported
    steps = service.uninstall()
    assert not (unit_dir / "abcd.service").exists() and not (unit_dir / "abcd.socket").exists()
    assert any(s.startswith("removed ") for s in steps)


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
