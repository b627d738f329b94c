"""The daemon's log: one line per record whatever it carries, rotated and owner-only in a
file, priority-tagged in the journal."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

from abcd_daemon.server.logs import FORMAT, OneLineFormatter, log_unexpected

from .procs import DaemonProc, env_for, run_shim, wait_for

HEADER = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} abcd\[\d+\] [A-Z]+ ")


def _logger(stream) -> logging.Logger:
    log = logging.getLogger(f"abcd.test.{id(stream)}")
    log.propagate = False
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter(FORMAT))
    log.addHandler(handler)
    return log


def test_a_message_or_traceback_carrying_line_breaks_stays_on_abcds_lines():
    stream = io.StringIO()
    log = _logger(stream)
    forged = "2026-01-01 00:00:00,000 abcd[1] INFO forged"
    log.warning("peer said %s", f"hello\n{forged}\r\x1b[2J\u2028end")
    try:
        raise ValueError(f"bad\n{forged}")
    except ValueError:
        log.exception("failed")
    lines = stream.getvalue().splitlines()
    assert all(HEADER.match(line) or line.startswith("    | ") for line in lines), lines
    assert not any(line.startswith(forged) for line in lines)
    assert "hello\\n2026-01-01" in lines[0] and "\\r\\x1b[2J\\u2028end" in lines[0]
    assert "    | ValueError: bad" in lines and f"    | {forged}" in lines  # indented under abcd's


def test_an_unexpected_error_on_unredacted_input_is_logged_without_its_message():
    stream = io.StringIO()
    log = _logger(stream)
    secret = "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"
    try:
        {}[secret]
    except KeyError as exc:
        summary = log_unexpected(log, "intake of x.json", exc)
    text = stream.getvalue()
    assert secret not in text and secret not in summary
    assert summary == "intake of x.json: unexpected KeyError"
    assert "test_logs.py" in text  # where it was raised is kept


def test_daemon_log_rotates_at_its_size_cap_and_every_file_is_owner_only(tmp_path):
    env = env_for(tmp_path)
    home = Path(env["ABCD_HOME"])
    home.mkdir(parents=True)
    (home / "config.toml").write_text("log_max_bytes = 4096\nlog_backups = 2\n")
    start = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "start"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert start.returncode == 0, start.stderr
    try:
        # Each payload of an event abcd does not handle is dropped with one WARNING line.
        for _ in range(60):
            run_shim("not-an-event", {"session_id": "s"}, env)
        wait_for(lambda: (home / "daemon.log.2").exists() and not os.listdir(home / "spool" / "new"),
                 what="two rotations")
    finally:
        subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "stop"], env=env,
                       capture_output=True, timeout=60)
    logs = sorted(home.glob("daemon.log*"))
    assert [p.name for p in logs] == ["daemon.log", "daemon.log.1", "daemon.log.2"]  # 3rd dropped
    for path in logs:
        assert oct(path.stat().st_mode & 0o777) == "0o600", path
        assert path.stat().st_size <= 4096, path
        assert all(HEADER.match(line) for line in path.read_text().splitlines())


def test_under_the_journal_lines_carry_a_priority_and_no_timestamp(tmp_path):
    log_path = tmp_path / "journal-stream"
    log_path.touch()
    st = os.stat(log_path)
    env = env_for(tmp_path, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    daemon = DaemonProc(env, log_path).wait_ready()
    try:
        run_shim("not-an-event", {"session_id": "s"}, env)
        wait_for(lambda: "intake dropped" in daemon.read_log(), what="the dropped payload's line")
    finally:
        assert daemon.stop() == 0
    lines = daemon.read_log().splitlines()
    assert any(line.startswith("<6>abcd daemon") for line in lines)
    assert any(line.startswith("<4>intake dropped") for line in lines)
    assert not any(HEADER.match(line) for line in lines)
