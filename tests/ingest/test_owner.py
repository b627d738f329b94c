"""The ownership ladder, with git answered by a table (real git is exercised by the
tree tests)."""

from pathlib import Path

import pytest

from abcd_daemon.ingest.facts import CLAUDE_CODE, JSONL_STORE
from abcd_daemon.ingest.owner import AMBIGUOUS, OWNED, UNOWNED, GitCache, decide
from abcd_daemon.locate.git import NotARepository

A, B = "a" * 40, "b" * 40
REPOS = {"/repo-a": A, "/repo-a/sub": A, "/repo-b": B, "/store-in-a": A}


def fake_git(calls):
    def resolve(directory):
        calls.append(directory)
        if directory in REPOS:
            return Path(directory), REPOS[directory]
        raise NotARepository(f"directory {directory!r} does not exist (a removed worktree?)")
    return resolve


@pytest.fixture
def calls():
    return []


@pytest.fixture
def git(calls):
    return GitCache(resolve=fake_git(calls))


def own(git, *, cwds=(), session=None, lanes=(), harness=CLAUDE_CODE, path="/h/p/s1.jsonl", main=True):
    return decide(session_id="s1", harness=harness, path=path, cwds=tuple(cwds), session=session,
                  known_lanes=tuple(lanes), git=git, is_main=main)


def test_the_recorded_cwd_decides_and_a_gone_cwd_does_not_vote(git):
    owner = own(git, cwds=["/gone-worktree", "/repo-a", "/repo-a/sub"])
    assert (owner.status, owner.root_sha, owner.via) == (OWNED, A, "cwd")


def test_one_session_in_two_repositories_is_ambiguous_not_guessed(git):
    owner = own(git, cwds=["/repo-a", "/repo-b"])
    assert owner.status == AMBIGUOUS and "2 repositories" in owner.reason


def test_a_subagent_follows_its_session_before_its_own_cwd(git):
    session = own(git, cwds=["/repo-a"])
    owner = own(git, cwds=["/repo-b"], session=session, main=False)
    assert (owner.root_sha, owner.via) == (A, "session")


def test_a_subagent_of_an_ambiguous_session_is_ambiguous_too(git):
    session = own(git, cwds=["/repo-a", "/repo-b"])
    assert own(git, cwds=["/repo-a"], session=session, main=False).status == AMBIGUOUS


def test_a_subagent_whose_session_has_no_answer_uses_its_own_cwd(git):
    session = own(git, cwds=[])
    owner = own(git, cwds=["/repo-b"], session=session, main=False)
    assert (owner.root_sha, owner.via) == (B, "file-cwd")


def test_a_lane_that_knows_the_session_places_it_when_no_cwd_resolves(git):
    owner = own(git, cwds=["/gone"], lanes=[B])
    assert (owner.status, owner.root_sha, owner.via) == (OWNED, B, "lane")
    assert own(git, cwds=["/gone"], lanes=[A, B]).status == AMBIGUOUS


def test_a_store_harness_file_belongs_to_the_repository_that_contains_it(git):
    owner = own(git, harness=JSONL_STORE, path="/store-in-a/s1.jsonl")
    assert (owner.status, owner.root_sha, owner.via) == (OWNED, A, "file-location")


def test_a_claude_code_file_is_never_placed_by_where_it_lies(git):
    owner = own(git, harness=CLAUDE_CODE, path="/store-in-a/s1.jsonl")
    assert owner.status == UNOWNED and "no cwd is recorded" in owner.reason


def test_unowned_says_which_cwd_has_no_repository(git):
    owner = own(git, cwds=["/gone", "/also-gone"])
    assert owner.status == UNOWNED
    assert owner.reason.startswith("no repository at /gone (")
    assert "1 other cwd" in owner.reason and "no lane knows session s1" in owner.reason


def test_each_directory_is_resolved_once_and_relative_ones_never(git, calls):
    for _ in range(3):
        own(git, cwds=["/repo-a", "-experiments/worktrees", "e:\\Workspace\\x"])
    assert calls == ["/repo-a"]
    assert "not an absolute path" in own(git, cwds=["-experiments/worktrees"]).reason
