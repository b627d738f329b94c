"""`abcd history missing`, through the real executable (no daemon: in-process)."""

from __future__ import annotations

import json
import os

from ..ingest.conftest import aged_transcript


def harness_transcript(claude_dir, project, session, cwd):
    return aged_transcript(claude_dir / "projects" / project / f"{session}.jsonl", session, cwd)


def local():
    return dict(os.environ, ABCD_LOCAL="1")


def test_missing_lists_this_repository_s_transcripts_and_counts_the_rest(in_repo, cli, claude_dir, tmp_path):
    path, sha = in_repo
    nowhere = tmp_path / "no-repo"
    nowhere.mkdir()
    harness_transcript(claude_dir, "-repo", "sess-mine", path)
    harness_transcript(claude_dir, "-no-repo", "sess-orphan", nowhere)
    code, out, err = cli("history", "missing", env=local())
    assert code == 0, err
    assert "1 harness transcript(s) of this repository not stored" in out
    assert "sess-mine" in out and "pending" in out and "30 day(s) left" in out
    assert "sess-orphan" not in out and "1 more in other repositories or in none" in out
    code, out, err = cli("history", "missing", "--all-repos", "--json", env=local())
    items = {i["session_id"]: i for i in json.loads(out)["items"]}
    assert code == 0 and set(items) == {"sess-mine", "sess-orphan"}
    assert items["sess-orphan"]["reason"] == "no-repository" and items["sess-mine"]["root_sha"] == sha


def test_missing_says_so_when_everything_is_stored(in_repo, cli):
    code, out, err = cli("history", "missing", env=local())
    assert code == 0 and "every harness transcript of this repository is stored" in out, err


def test_missing_refuses_outside_a_checkout_unless_asked_for_every_repository(cli, tmp_path):
    code, _, err = cli("history", "missing", cwd=tmp_path, env=local())
    assert code == 2 and "not inside a git repository" in err and "Traceback" not in err
    code, out, err = cli("history", "missing", "--all-repos", cwd=tmp_path, env=local())
    assert code == 0 and "every harness transcript is stored" in out, err
