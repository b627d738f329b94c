"""The `abcd history ingest` and `abcd history migrate` verbs through the real
executable, in-process (ABCD_LOCAL=1); none of these needs the scanner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..conftest import run_on_a_terminal
from .test_migrate import SHA, legacy

ABCD = Path(sys.executable).with_name("abcd")


def run_abcd(*args):
    res = subprocess.run([str(ABCD), *args], capture_output=True, timeout=300,
                         env=dict(os.environ, ABCD_LOCAL="1"))
    return res.returncode, res.stdout.decode(), res.stderr.decode()


def test_the_cli_dry_run_changes_nothing(fixture_tree):
    code, out, _ = run_abcd("history", "ingest", str(fixture_tree.root), "--dry-run", "--json")
    report = json.loads(out)
    assert code == 0 and report["dry_run"] and len(report["staged"]) == 80
    assert not Path(os.environ["ABCD_HOME"]).exists()


def test_the_cli_refuses_a_missing_root_and_a_bad_date(tmp_path):
    code, _, err = run_abcd("history", "ingest", str(tmp_path / "absent"))
    assert code == 2 and "is not a directory" in err
    code, _, err = run_abcd("history", "ingest", str(tmp_path), "--since", "yesterday")
    assert code == 2 and "is not a date" in err


def test_the_cli_draws_a_progress_bar_on_a_terminal(fixture_tree):
    code, stdout, drawn = run_on_a_terminal(
        [str(ABCD), "history", "ingest", str(fixture_tree.root), "--no-drain"],
        dict(os.environ, ABCD_LOCAL="1"))
    assert code == 0
    assert "\r" in drawn and "80/80 files" in drawn and "staging" in drawn and "reading" in drawn
    assert b"the staged transcripts wait for the daemon" in stdout



def test_the_cli_migrate_is_a_dry_run_until_told_to_apply(home):
    base = legacy(home)
    code, out, _ = run_abcd("history", "migrate")
    assert code == 0 and "would move 3 record(s) and 3 staged file(s)" in out and "--apply" in out
    assert not home.transcripts.exists()
    code, out, err = run_abcd("history", "migrate", "--apply", "--json")
    report = json.loads(out)
    assert code == 0, err
    assert report["left_total"] == 0 and report["lanes"][0]["moved"] == 6
    assert (base / "transcripts.moved").exists() and (home.transcripts / SHA / "records").is_dir()
    code, out, _ = run_abcd("history", "migrate", "--apply")
    assert code == 0 and "already moved" in out
