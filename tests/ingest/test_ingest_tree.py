"""Ingest of the real Claude Code fixture tree (copied, cwds rewritten to real git
repositories), staging-level: what lands in which lane's staging queue."""

import json
import os
import shutil

import pytest

from abcd_daemon.errors import InputError
from abcd_daemon.ingest.run import ingest
from abcd_daemon.locate.notes import note_session
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane, list_lanes

from ..conftest import make_repo
from .conftest import NOT_CONVERSATIONS, T0, claude_line, write_jsonl

WT_SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"


def staged_everywhere(home):
    out = []
    for lane in list_lanes(home):
        out += list_staged(lane, now_ns=T0, ttl_s=1e12)
    return out


def snapshot(path):
    """Every file under ``path`` with its bytes and mtime ("" when absent)."""
    out = {}
    for dirpath, _, files in os.walk(path):
        for name in files:
            p = os.path.join(dirpath, name)
            out[p] = (open(p, "rb").read(), os.stat(p).st_mtime_ns)
    return out


def test_every_conversation_of_the_fixture_tree_is_staged_once_in_its_repository(home, fixture_tree, config):
    report = ingest(home, [fixture_tree.root], config=config, now_ns=T0)
    entries = staged_everywhere(home)
    sources = [e.source_path for e in entries]
    assert sorted(sources) == sorted(str(p) for p in fixture_tree.conversations())
    assert len(set(sources)) == len(sources) == 80
    lane_of = {os.path.relpath(e.source_path, fixture_tree.root): e.root_sha for e in entries}
    # a session whose cwds include a directory that no longer exists
    assert lane_of["-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl"] \
        == fixture_tree.sha("danieldemmel")
    # sub-agents that ran in git worktrees: their session's repository
    assert lane_of[f"-experiments-worktrees/{WT_SESSION}/subagents/agent-a4ca7529859c158c2.jsonl"] \
        == fixture_tree.sha("worktrees")
    # an older-layout sub-agent whose main thread is not on disk: its own cwd
    assert lane_of["-Users-dain-workspace-claude-code-log-sample/agent-fea317d4.jsonl"] \
        == fixture_tree.sha("claude-code-log")
    # an older-layout sub-agent whose main thread is empty
    assert lane_of["-Users-dain-workspace-coderabbit-review-helper/agent-1d78a5e5.jsonl"] \
        == fixture_tree.sha("coderabbit")
    assert report.empty == 17 and report.unowned == [] and report.failed == []
    assert sorted(os.path.relpath(x.path, fixture_tree.root) for x in report.skipped) == sorted(NOT_CONVERSATIONS)
    assert {x.reason for x in report.skipped} == {"not-a-transcript"}
    assert sum(r.staged for r in report.repositories) == 80
    assert {r.root_sha for r in report.repositories} == {sha for _, sha in fixture_tree.repos.values()}


def test_staged_subagents_carry_their_meta_sidecar_lineage(home, fixture_tree, config):
    ingest(home, [fixture_tree.root], config=config, now_ns=T0)
    entries = {e.agent_id: e for e in staged_everywhere(home) if e.agent_id}
    assert len(entries) == 53
    worktree_agents = [e for e in entries.values() if e.session_id == WT_SESSION]
    assert len(worktree_agents) == 6
    for e in worktree_agents:
        assert (e.agent_type, e.spawn_attribution, e.lineage_source) == (
            "general-purpose", "unattributed", "ingest")
        assert (e.parent_agent_id, e.spawn_depth) == ("", 0)
    legacy = entries["c63fe96c"]  # older layout: no meta sidecar, session from its lines
    assert (legacy.session_id, legacy.agent_type, legacy.spawn_attribution) == (
        "5ed31c36-bca8-40fd-8d24-f1a1f0af7901", "", "unattributed")
    mains = [e for e in staged_everywhere(home) if not e.agent_id]
    assert all(e.lineage_source == "ingest" and not e.spawn_attribution for e in mains)


def test_a_meta_sidecar_with_a_spawn_depth_attributes_the_subagent(home, tmp_path, config):
    repo = tmp_path / "repo"
    make_repo(repo)
    proj = tmp_path / "projects" / "p"
    write_jsonl(proj / "s1.jsonl", [claude_line("s1", str(repo), 0)])
    write_jsonl(proj / "s1" / "subagents" / "agent-a2.jsonl", [claude_line("s1", str(repo), 0, agent="a2")])
    (proj / "s1" / "subagents" / "agent-a2.meta.json").write_text(json.dumps(
        {"agentType": "Plan", "parentAgentId": "a1", "spawnDepth": 2, "toolUseId": "toolu_7"}))
    ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    [sub] = [e for e in staged_everywhere(home) if e.agent_id]
    assert (sub.agent_type, sub.spawn_attribution, sub.parent_agent_id, sub.spawn_depth) == (
        "Plan", "sidecar", "a1", 2)


def test_a_second_ingest_stages_nothing_new(home, fixture_tree, config):
    ingest(home, [fixture_tree.root], config=config, now_ns=T0)
    before = snapshot(home.transcripts)
    again = ingest(home, [fixture_tree.root], config=config, now_ns=T0 + 10**9)
    assert again.staged == [] and again.present == 80 and again.failed == []
    assert sum(r.present for r in again.repositories) == 80
    after = snapshot(home.transcripts)
    assert {p: v for p, v in after.items() if "/sessions/" not in p} == \
        {p: v for p, v in before.items() if "/sessions/" not in p}


def test_dry_run_changes_nothing_and_says_what_it_would_stage(home, fixture_tree, config):
    tree_before = snapshot(fixture_tree.root)
    report = ingest(home, [fixture_tree.root], config=config, now_ns=T0, dry_run=True)
    assert not home.root.exists()
    assert snapshot(fixture_tree.root) == tree_before
    assert report.dry_run and len(report.staged) == 80 and all(not s.name for s in report.staged)
    assert report.staged_lanes() == []


def test_a_transcript_whose_repository_cannot_be_found_is_listed_not_guessed(home, tmp_path, config):
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    proj = tmp_path / "projects" / "p"
    write_jsonl(proj / "gone.jsonl", [claude_line("gone", str(tmp_path / "removed"), 0)])
    write_jsonl(proj / "plain.jsonl", [claude_line("plain", str(plain), 0)])
    write_jsonl(proj / "anon.jsonl", [claude_line("anon", "-experiments/worktrees", 0)])
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    assert staged_everywhere(home) == [] and list_lanes(home) == []
    why = {x.session_id: x.detail for x in report.unowned}
    assert set(why) == {"gone", "plain", "anon"} and {x.reason for x in report.unowned} == {"no-repository"}
    assert why["gone"].startswith(f"no repository at {tmp_path / 'removed'} (")
    assert "not inside a git repository" in why["plain"]
    assert "not an absolute path" in why["anon"]


def test_a_symlinked_transcript_or_directory_is_skipped_with_a_reason(home, fixture_tree, config, tmp_path):
    real = fixture_tree.root / "-src-deep-manifest" / "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"
    os.symlink(real, fixture_tree.root / "-src-deep-manifest" / "0000aaaa-link.jsonl")
    outside = tmp_path / "outside"
    shutil.copytree(fixture_tree.root / "-src-experiments-claude_p", outside)
    os.symlink(outside, fixture_tree.root / "linked-project")
    report = ingest(home, [fixture_tree.root], config=config, now_ns=T0)
    links = {os.path.basename(x.path): x.detail for x in report.skipped if x.reason == "symlink"}
    assert set(links) == {"0000aaaa-link.jsonl", "linked-project"}
    sources = [os.path.relpath(e.source_path, fixture_tree.root) for e in staged_everywhere(home)]
    assert len(sources) == 80 and not any("link" in s for s in sources)


def test_a_session_that_ran_in_two_repositories_is_skipped_with_its_subagents(home, tmp_path, config):
    a, b = tmp_path / "a", tmp_path / "b"
    make_repo(a, message="a")
    make_repo(b, message="b")
    proj = tmp_path / "projects" / "p"
    write_jsonl(proj / "s1.jsonl", [claude_line("s1", str(a), 0), claude_line("s1", str(b), 1)])
    write_jsonl(proj / "s1" / "subagents" / "agent-x1.jsonl", [claude_line("s1", str(a), 0, agent="x1")])
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    assert staged_everywhere(home) == []
    assert [(x.reason, x.agent_id) for x in report.skipped] == [("ambiguous-owner", ""), ("ambiguous-owner", "x1")]
    assert "2 repositories" in report.skipped[0].detail


def test_a_subagent_whose_cwd_is_gone_is_placed_by_the_lane_that_knows_its_session(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    note_session(Lane(home, sha), "s1", now_ns=T0, ttl_s=1e9)
    proj = tmp_path / "projects" / "p"
    write_jsonl(proj / "s1" / "subagents" / "agent-x1.jsonl", [claude_line("s1", str(tmp_path / "wt"), 0, agent="x1")])
    ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    [entry] = staged_everywhere(home)
    assert (entry.root_sha, entry.agent_id) == (sha, "x1")


def test_since_leaves_older_files_out_but_still_reads_their_cwd_for_ownership(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    proj = tmp_path / "projects" / "p"
    main = write_jsonl(proj / "s1.jsonl", [claude_line("s1", str(tmp_path / "repo"), 0)])
    write_jsonl(proj / "s1" / "subagents" / "agent-x1.jsonl", [claude_line("s1", str(tmp_path / "gone"), 0, agent="x1")])
    old = 1_600_000_000  # 2020
    os.utime(main, (old, old))
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0, since="2021-01-01")
    assert report.older == 1 and report.files == 1
    [entry] = staged_everywhere(home)
    assert (entry.agent_id, entry.root_sha) == ("x1", sha)


def test_since_must_be_a_date(home, tmp_path, config):
    with pytest.raises(InputError):
        ingest(home, [tmp_path], config=config, now_ns=T0, since="last tuesday")


def test_into_places_everything_it_is_given(home, tmp_path, config):
    sha = make_repo(tmp_path / "dest")
    proj = tmp_path / "projects" / "p"
    write_jsonl(proj / "s1.jsonl", [claude_line("s1", str(tmp_path / "gone"), 0)])
    write_jsonl(proj / "s2.jsonl", [claude_line("s2", "/elsewhere", 0)])
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0, into=str(tmp_path / "dest"))
    assert {e.root_sha for e in staged_everywhere(home)} == {sha} and len(report.staged) == 2
    assert {s.via for s in report.staged} == {"into"}
    with pytest.raises(InputError):
        ingest(home, [tmp_path / "projects"], config=config, now_ns=T0, into=str(tmp_path / "gone"))


def test_a_transcript_that_grew_is_staged_again_over_its_staged_copy(home, tmp_path, config):
    make_repo(tmp_path / "repo")
    path = write_jsonl(tmp_path / "projects" / "p" / "s1.jsonl", [claude_line("s1", str(tmp_path / "repo"), 0)])
    ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    with open(path, "a") as f:
        f.write(json.dumps(claude_line("s1", str(tmp_path / "repo"), 1)) + "\n")
    report = ingest(home, [tmp_path / "projects"], config=config, now_ns=T0 + 1)
    assert len(report.staged) == 1 and report.staged[0].replaced
    [entry] = staged_everywhere(home)
    assert entry.bytes == path.stat().st_size


def test_a_main_thread_placed_by_its_cwd_notes_its_session(home, tmp_path, config):
    sha = make_repo(tmp_path / "repo")
    write_jsonl(tmp_path / "projects" / "p" / "s1.jsonl", [claude_line("s1", str(tmp_path / "repo"), 0)])
    ingest(home, [tmp_path / "projects"], config=config, now_ns=T0)
    assert (Lane(home, sha).sessions / "s1").is_file()


def test_progress_is_reported_per_file_in_both_phases(home, fixture_tree, config):
    calls = []
    ingest(home, [fixture_tree.root], config=config, now_ns=T0, progress=lambda *a: calls.append(a))
    starts = [c for c in calls if c[0] == 0]
    assert [(c[1]) for c in starts] == [99, 80]
    assert calls[len(calls) - 1][0] == 80 and max(c[0] for c in calls[:100]) == 99
    assert all(c[2] <= c[3] for c in calls)


def test_an_empty_main_file_beside_its_stored_agents_is_marked_empty_in_their_lane(
        home, fixture_tree, config):
    from abcd_daemon.store.empty_mains import main_was_empty

    session = "8a69e93c-e842-471d-a053-5c316757e5e9"  # coderabbit: a zero-byte main file
    main = os.path.join(fixture_tree.root, "-Users-dain-workspace-coderabbit-review-helper",
                        f"{session}.jsonl")
    assert os.path.getsize(main) == 0
    ingest(home, [fixture_tree.root], config=config, now_ns=T0)
    lane = Lane(home, fixture_tree.sha("coderabbit"))
    assert main_was_empty(lane, session)
    # only there: no other lane is told, and no session without an empty main is
    others = [x for x in list_lanes(home) if x.root_sha != lane.root_sha]
    assert not any(main_was_empty(x, session) for x in others)
    assert not main_was_empty(lane, WT_SESSION)


def test_a_dry_run_writes_no_empty_main_marker(home, fixture_tree, config):
    ingest(home, [fixture_tree.root], config=config, now_ns=T0, dry_run=True)
    assert not any(x.empty_mains.exists() for x in list_lanes(home))
