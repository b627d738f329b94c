"""Recognising transcripts by path, and the walk's refusals."""

import os

import pytest

from abcd_daemon.ingest.layout import MAX_DEPTH, Shape, main_path, recognise, walk


@pytest.mark.parametrize("rel, shape", [
    ("proj/5ed31c36-bca8.jsonl", Shape("main", "main", "5ed31c36-bca8", "")),
    ("proj/s1/subagents/agent-a52886dc180afb356.jsonl",
     Shape("subagent", "subagents", "s1", "a52886dc180afb356")),
    ("proj/s1/subagents/workflows/wf_demo01/agent-ag000001.jsonl",
     Shape("subagent", "workflow", "s1", "ag000001")),
    ("proj/agent-c63fe96c.jsonl", Shape("subagent", "legacy-agent", "", "c63fe96c")),
    ("s1.jsonl", Shape("main", "main", "s1", "")),
])
def test_paths_of_both_layouts_are_recognised(rel, shape):
    assert recognise(tuple(rel.split("/"))) == shape


@pytest.mark.parametrize("rel, reason", [
    ("proj/s1/subagents/workflows/wf_demo01/journal.jsonl", "not-a-transcript"),
    ("proj/s1/subagents/notes.jsonl", "not-a-transcript"),
    ("proj/has space.jsonl", "bad-id"),
    ("proj/s1/subagents/agent-.jsonl", "bad-id"),
])
def test_files_that_are_not_usable_transcripts_are_refused_with_a_reason(rel, reason):
    assert recognise(tuple(rel.split("/")))[0] == reason


def test_files_that_are_not_jsonl_are_not_considered():
    assert recognise(("proj", "s1", "subagents", "agent-x.meta.json")) is None


def test_a_subagents_main_thread_is_found_beside_its_session_folder(tmp_path):
    tree = tmp_path / "p"
    (tree / "s1" / "subagents" / "workflows" / "w").mkdir(parents=True)
    for rel in ("s1/subagents/agent-a1.jsonl", "s1/subagents/workflows/w/agent-a2.jsonl", "agent-a3.jsonl"):
        (tree / rel).write_text("{}\n")
    found = {f.agent_id: f for f in walk([tmp_path]).found}
    assert main_path(found["a1"], "s1") == str(tree / "s1.jsonl")
    assert main_path(found["a2"], "s1") == str(tree / "s1.jsonl")
    assert main_path(found["a3"], "s9") == str(tree / "s9.jsonl")


def test_walk_reports_symlinks_and_never_follows_them(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "s1.jsonl").write_text("{}\n")
    root = tmp_path / "root"
    (root / "proj").mkdir(parents=True)
    os.symlink(real / "s1.jsonl", root / "proj" / "s2.jsonl")
    os.symlink(real, root / "linked-project")
    out = walk([root])
    assert out.found == []
    assert sorted((os.path.basename(x.path), x.reason) for x in out.listed) == [
        ("linked-project", "symlink"), ("s2.jsonl", "symlink")]


def test_walk_reports_a_fifo_named_like_a_transcript(tmp_path):
    os.mkfifo(tmp_path / "s1.jsonl")
    [listed] = walk([tmp_path]).listed
    assert listed.reason == "not-regular"


def test_walk_stops_at_the_depth_limit_and_skips_git(tmp_path):
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(MAX_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / "s1.jsonl").write_text("{}\n")
    (tmp_path / "d0" / "ok.jsonl").write_text("{}\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "s2.jsonl").write_text("{}\n")
    out = walk([tmp_path])
    assert [f.session_id for f in out.found] == ["ok"]
    assert [x.reason for x in out.listed] == ["too-deep"]


def test_walk_lists_a_missing_root(tmp_path):
    [listed] = walk([tmp_path / "absent"]).listed
    assert listed.reason == "root-missing"


def test_walk_reports_a_file_under_nested_roots_once(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "s1.jsonl").write_text("{}\n")
    assert len(walk([tmp_path, tmp_path / "p"]).found) == 1
