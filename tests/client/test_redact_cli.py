"""`abcd redact`: the capture redaction on a file, printed, nothing stored."""

from __future__ import annotations

import json
import os
from pathlib import Path

TOKEN = "glpat-" + "a1B2c3D4e5F6g7H8i9J0"
LINE = json.dumps({"type": "user", "message": {"content": f"export GITLAB_TOKEN={TOKEN}\nDB_PASS=hunter2-Xk29!q"}})


def _store_files() -> list[Path]:
    home = Path(os.environ["ABCD_HOME"])
    return [p for p in home.rglob("*") if p.is_file()] if home.exists() else []


def test_redact_prints_the_masked_transcript_and_stores_nothing(cli, tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text(LINE + "\nplain text line\n")
    code, out, err = cli("redact", str(src))
    assert code == 0, err
    assert TOKEN[6:] not in out and "hunter2-Xk29" not in out
    first, second = out.splitlines()
    json.loads(first)
    assert second == "plain text line"
    assert not [p for p in _store_files() if "transcripts" in p.parts]


def test_redact_json_lists_findings_by_rule_and_line_never_the_secret(cli, tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text("nothing here\n" + LINE + "\n")
    code, out, err = cli("redact", str(src), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scanner"].startswith("kingfisher ")
    assert doc["refused"] is None and doc["lines"] == 2
    rules = {(f["rule"], f["line"]) for f in doc["findings"]}
    assert ("betterleaks.gitlab-pat", 2) in rules
    assert ("secret_assignment", 2) in rules
    assert TOKEN[6:] not in out and "hunter2" not in out


def test_redact_writes_out_file_owner_only(cli, tmp_path):
    src = tmp_path / "t.jsonl"
    src.write_text(LINE + "\n")
    dest = tmp_path / "clean.jsonl"
    code, out, err = cli("redact", str(src), "--out", str(dest))
    assert code == 0, err and out == ""
    assert TOKEN[6:] not in dest.read_text()
    assert dest.stat().st_mode & 0o777 == 0o600


def test_redact_reads_stdin(cli):
    code, out, err = cli("redact", "-", input=(LINE + "\n").encode())
    assert code == 0, err
    assert TOKEN[6:] not in out


def test_redact_refuses_what_cannot_be_made_safe_and_writes_nothing(cli, tmp_path):
    home = Path(os.environ["ABCD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    # A blocking finding inside a JSON number cannot be masked and keep the line JSON.
    (home / "config.toml").write_text(
        '[[scanner.rules]]\nname = "acct"\nseverity = "hard_fail"\nkeywords = ["98765"]\nregex = "98765[0-9]{6}"\n')
    src = tmp_path / "t.jsonl"
    src.write_text('{"ok": 1}\n{"n": 98765432101}\n')
    dest = tmp_path / "out.txt"
    code, out, err = cli("redact", str(src), "--out", str(dest), "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["refused"]["line"] == 2 and doc["refused"]["rule"] == "json_integrity"
    assert "abcd: refused" in err and "line 2" in err
    assert not dest.exists()


def test_redact_bad_input_exits_2(cli, tmp_path):
    code, _, err = cli("redact", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "does not exist" in err
    empty = tmp_path / "empty"
    empty.write_text("")
    assert cli("redact", str(empty))[0] == 2


def test_a_refusal_in_a_late_batch_of_a_streamed_file_still_writes_nothing(cli, tmp_path):
    home = Path(os.environ["ABCD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'capture_chunk_bytes = 65536\n[[scanner.rules]]\nname = "acct"\nseverity = "hard_fail"\n'
        'keywords = ["98765"]\nregex = "98765[0-9]{6}"\n')
    src = tmp_path / "t.jsonl"
    filler = "".join(json.dumps({"n": i, "text": "x" * 200}) + "\n" for i in range(2000))  # ~440 KB
    src.write_text(filler + '{"n": 98765432101}\n')
    dest = tmp_path / "out.txt"
    code, out, err = cli("redact", str(src), "--out", str(dest))
    assert code == 1 and "line 2001" in err
    assert not dest.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".abcd-tmp-")]
    code, out, err = cli("redact", str(src))
    assert code == 1 and out == ""


def test_a_line_over_the_line_cap_is_bad_input_and_names_the_setting(cli, tmp_path):
    home = Path(os.environ["ABCD_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("max_line_bytes = 4096\n")
    src = tmp_path / "t.jsonl"
    src.write_text('{"ok": 1}\n' + json.dumps({"text": "y" * 5000}) + "\n")
    code, out, err = cli("redact", str(src))
    assert code == 2 and "max_line_bytes" in err and out == ""
    code, out, err = cli("redact", "-", input=src.read_bytes())
    assert code == 2 and "max_line_bytes" in err and out == ""
