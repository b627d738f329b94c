"""Refusals at start: ``abcd daemon start`` prints the reason itself and exits non-zero,
with no traceback and no "see the log"; ``abcd daemon run`` (what a service manager
runs) says the same; the hooks keep spooling meanwhile, so nothing is lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .procs import answers, env_for, run_shim

RULE = """
[[scanner.rules]]
name = "broken"
severity = "hard_fail"
keywords = ["broken_"]
regex = "broken_(("
"""


def abcd(env, *args):
    res = subprocess.run([sys.executable, "-m", "abcd_client", *args], env=env,
                         capture_output=True, text=True, timeout=60)
    return res.returncode, res.stdout, res.stderr


def spooled_anywhere(base: Path) -> list[Path]:
    return [p for p in base.rglob("*.json") if p.parent.name == "new" and p.parent.parent.name == "spool"]


def refused(env, expected: str) -> str:
    code, out, err = abcd(env, "daemon", "start")
    assert code != 0, out
    first = err.splitlines()[0]
    assert first.startswith("abcd: ") and expected in first, err
    assert "Traceback" not in err and "daemon.log" not in err and "see the log" not in err, err
    assert not answers(env)
    return err


def with_config(tmp_path, text: str) -> dict:
    env = env_for(tmp_path)
    home = Path(env["ABCD_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text(text)
    return env


@pytest.mark.parametrize("config, expected", [
    ("drain_interval_s = -1\n", "drain_interval_s must be a positive number, not -1"),
    ("colour = 'blue'\n", "unknown setting 'colour'"),
    ("[drain\n", "is not valid TOML"),
    (RULE, "the scanner is degraded (scanner addition 'broken'"),
], ids=["bad-value", "unknown-key", "not-toml", "degraded-scanner"])
def test_start_refuses_an_unusable_configuration_with_the_reason_and_hooks_keep_spooling(
        tmp_path, config, expected):
    env = with_config(tmp_path, config)
    refused(env, expected)
    assert run_shim("session-end", {"session_id": "s1", "cwd": str(tmp_path)}, env).returncode == 0
    assert len(list((Path(env["ABCD_HOME"]) / "spool" / "new").glob("*.json"))) == 1
    code, _, _ = abcd(env, "daemon", "status")
    assert code == 1  # not running, and saying so (the one exit table: 1 refused or failed)


def test_run_as_a_service_manager_starts_it_refuses_with_the_same_line(tmp_path):
    env = with_config(tmp_path, RULE)
    code, _, err = abcd(env, "daemon", "run")
    assert code != 0 and "Traceback" not in err
    assert err.startswith("abcd: the scanner is degraded (scanner addition 'broken'")
    assert "abcd: fix or remove the [[scanner.rules]] entry" in err


def test_start_refuses_an_abcd_home_that_is_a_file_and_hooks_spool_to_a_fallback(tmp_path):
    env = env_for(tmp_path)
    Path(env["ABCD_HOME"]).write_text("not a directory")
    refused(env, f"ABCD_HOME '{env['ABCD_HOME']}' is not a directory")
    res = run_shim("session-end", {"session_id": "s1", "cwd": str(tmp_path)}, env)
    assert res.returncode == 0 and b"spooled it in" in res.stderr
    assert len(spooled_anywhere(tmp_path)) == 1
    assert Path(env["ABCD_HOME"]).read_text() == "not a directory"  # untouched


def test_start_refuses_a_socket_path_too_long_for_a_unix_socket(tmp_path):
    env = env_for(tmp_path, ABCD_SOCKET=str(tmp_path / ("s" * 120) / "daemon.sock"))
    err = refused(env, "a Unix socket path holds at most 107")
    assert "set ABCD_SOCKET (or XDG_RUNTIME_DIR) to a shorter directory" in err
    assert run_shim("subagent-stop", {"session_id": "s1", "agent_id": "a1"}, env).returncode == 0
    assert len(list((Path(env["ABCD_HOME"]) / "spool" / "new").glob("*.json"))) == 1


def test_a_refusal_only_the_started_daemon_sees_is_printed_by_start_from_its_stderr(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]), mode=0o700)
    Path(env["ABCD_SOCKET"]).write_text("precious")  # not a socket: only the lock holder checks
    refused(env, "exists and is not a socket; refusing to replace it")
    assert Path(env["ABCD_SOCKET"]).read_text() == "precious"
    stderr_file = Path(env["ABCD_HOME"]) / "daemon.stderr"
    assert oct(stderr_file.stat().st_mode & 0o777) == "0o600"


def test_a_good_start_then_a_second_start_reports_the_running_daemon(tmp_path):
    env = env_for(tmp_path)
    code, out, err = abcd(env, "daemon", "start")
    try:
        assert code == 0, err
        assert out.startswith("abcd daemon started (pid ")
        code, out, _ = abcd(env, "daemon", "start")
        assert code == 0 and out.startswith("abcd daemon already running (pid ")
    finally:
        assert abcd(env, "daemon", "stop")[0] == 0


def test_a_first_start_answers_before_the_scanner_s_gate_is_compiled(tmp_path, ruleset_cache):
    """Preflight checks that the scanner builds whole without compiling its Vectorscan
    gate (seconds of CPU on a cold cache, a minute on a busy machine — a first start, or
    a service whose cache directory is read-only): the daemon must answer first; its
    first capture compiles the gate."""
    import shutil

    from .procs import DaemonProc

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for converted in ruleset_cache.glob("ruleset-*.json"):  # the rules converted; no gate
        shutil.copy2(converted, cache / converted.name)
    daemon = DaemonProc(env_for(tmp_path, ABCD_CACHE=str(cache)), tmp_path / "d.log").wait_ready()
    try:
        assert not list(cache.glob("gate-*")), "the daemon answered only once its gate was compiled"
    finally:
        assert daemon.stop() == 0, daemon.read_log()
