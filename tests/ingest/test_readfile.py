"""Ingest reads transcripts streamed, under the configured caps (ingest/readfile.py):
the facts and digest of a file equal those of its bytes, and a line or a file over a
cap is listed with the setting named, never staged and never truncated."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest

from abcd_daemon.errors import ReadRefused
from abcd_daemon.ingest.facts import facts_of
from abcd_daemon.ingest.readfile import file_digest, file_facts
from abcd_daemon.ingest.run import ingest
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane

from ..conftest import make_repo
from .conftest import T0, claude_line, write_jsonl

SESSION = "0c2b6a43-5f0e-4a3b-9d6e-1b7e2f0a9c11"


def test_the_streamed_facts_and_digest_are_those_of_the_bytes(tmp_path):
    lines = [claude_line(SESSION, "/w/repo", i) for i in range(50)]
    lines[10]["isSidechain"] = True
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", lines)
    with open(path, "ab") as f:
        f.write(b"\n  \n{not json\n" + b'{"sessionId": "other", "cwd": "/w/b"}')  # blank, broken, no newline
    raw = path.read_bytes()
    sha, size = file_digest(str(path), cap=1 << 30)
    assert (sha, size) == (hashlib.sha256(raw).hexdigest(), len(raw))
    assert file_facts(str(path), sha256=sha, size=size, cap=1 << 30, line_cap=1 << 20) == facts_of(raw)


def test_only_the_hashed_bytes_are_read_for_the_facts_of_a_growing_file(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [claude_line(SESSION, "/w/a", 0)])
    sha, size = file_digest(str(path), cap=1 << 30)
    with open(path, "a") as f:
        f.write(json.dumps({"sessionId": SESSION, "cwd": "/w/later"}) + "\n")
    facts = file_facts(str(path), sha256=sha, size=size, cap=1 << 30, line_cap=1 << 20)
    assert facts.cwds == ("/w/a",) and facts.size == size


def test_a_line_over_the_line_cap_is_refused_naming_the_setting(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [claude_line(SESSION, "/w/a", 0), {"text": "x" * 9000}])
    sha, size = file_digest(str(path), cap=1 << 30)
    with pytest.raises(ReadRefused) as err:
        file_facts(str(path), sha256=sha, size=size, cap=1 << 30, line_cap=4096)
    assert err.value.reason == "too-big" and "max_line_bytes" in str(err.value)


def test_ingest_lists_a_transcript_over_a_cap_and_stages_nothing(home, tmp_path, config):
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    root = tmp_path / "projects"
    write_jsonl(root / "-repo" / f"{SESSION}.jsonl",
                [claude_line(SESSION, str(repo), 0), {"sessionId": SESSION, "text": "y" * 9000}])
    small = dataclasses.replace(config, max_line_bytes=4096)
    report = ingest(home, [str(root)], config=small, now_ns=T0)
    [listed] = report.skipped
    assert listed.reason == "over-cap" and "max_line_bytes" in listed.detail
    assert list_staged(Lane(home, sha), now_ns=T0, ttl_s=1e12) == []
    report = ingest(home, [str(root)], config=config, now_ns=T0)  # the default cap: staged whole
    [entry] = list_staged(Lane(home, sha), now_ns=T0, ttl_s=1e12)
    assert entry.bytes == (root / "-repo" / f"{SESSION}.jsonl").stat().st_size
