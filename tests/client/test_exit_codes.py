"""One table of exit statuses (0 done, 1 refused or failed, 2 bad input or usage): the
table in the reference matches the error tree, every verb exits 2 on bad usage, an
empty file is bad input, and capture's refusal tells the truth."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_client.commands import VERBS
from abcd_client.exits import ENVIRONMENT, EXIT_CODES
from abcd_daemon.errors import (AbcdError, AmbiguousId, InputError, NotFoundError,
                                ReadRefused, RedactionResidual)

from ..conftest import NEVER_CONVERGES

ABCD = Path(sys.executable).with_name("abcd")
DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def abcd(*args, cwd=None, input=None, env=None):
    res = subprocess.run([str(ABCD), *args], cwd=cwd, input=input, capture_output=True,
                         text=True, timeout=120, env=env)
    return res.returncode, res.stdout, res.stderr


def test_the_exit_table_matches_the_error_tree_and_is_in_the_reference():
    assert [code for code, _ in EXIT_CODES] == [0, 1, 2]
    assert AbcdError("x").exit_code == NotFoundError("x").exit_code == 1
    assert InputError("x").exit_code == AmbiguousId("x").exit_code == 2
    assert RedactionResidual(["k"], [(0, 1)]).exit_code == 1
    assert ReadRefused("x", reason="empty").exit_code == 2
    assert ReadRefused("x", reason="unreadable").exit_code == 1
    text = DOC.read_text()
    assert "## Exit status" in text and all(f"| `{code}` |" in text for code, _ in EXIT_CODES)
    assert all(f"| `{name}` |" in text for name, _ in ENVIRONMENT)


@pytest.mark.parametrize("path", sorted(p for p in VERBS if p != ("hook",)), ids=" ".join)
def test_every_verb_exits_2_on_bad_usage(path, tmp_path):
    code, _, err = abcd(*path, "--no-such-flag", cwd=tmp_path)
    assert code == 2, err
    assert "No such option" in err


def test_hook_exits_0_even_on_bad_usage(tmp_path):
    assert abcd("hook", "no-such-event", cwd=tmp_path, input="")[0] == 0


@pytest.mark.parametrize("verb", [("history", "capture"), ("redact",)], ids=" ".join)
def test_an_empty_file_is_bad_input(verb, in_repo, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    args = [*verb, str(empty)] + (["--session", "s1"] if verb[0] == "history" else [])
    code, _, err = abcd(*args)
    assert code == 2 and "empty" in err, err


def test_daemon_status_exits_1_when_no_daemon_runs(tmp_path):
    code, out, _ = abcd("daemon", "status", "--json", cwd=tmp_path)
    assert code == 1 and json.loads(out) == {"running": False}


def test_capture_refused_by_redaction_says_nothing_was_kept_and_what_to_do(in_repo, tmp_path):
    home = Path(os.environ["ABCD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    rule = NEVER_CONVERGES
    (home / "config.toml").write_text(
        "[[scanner.rules]]\n" + "".join(f'{k} = {json.dumps(v)}\n' for k, v in rule.items()))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "abcdefghijklmnopQQ"}}) + "\n")
    code, _, err = abcd("history", "capture", str(transcript), "--session", "s1")
    assert code == 1, err
    assert "redaction left" in err and "capture keeps no copy" in err
    assert "quarantine" not in err and "< " not in err and "<entry>" not in err
    assert "abcd redact FILE" in err
    assert abcd("history", "list", "--json")[1].strip() == "[]"
