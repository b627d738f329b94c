"""Resolving a directory to its repository's root commit with real git."""

import pytest

from abcd_daemon.locate.git import NotARepository, repo_root_and_sha

from ..conftest import git, make_repo


def test_a_subdirectory_resolves_to_the_checkout_and_root_commit(tmp_path):
    sha = make_repo(tmp_path / "r")
    (tmp_path / "r" / "sub").mkdir()
    root, got = repo_root_and_sha(tmp_path / "r" / "sub")
    assert got == sha and root == (tmp_path / "r").resolve()


def test_a_later_commit_keeps_the_root(tmp_path):
    sha = make_repo(tmp_path / "r")
    (tmp_path / "r" / "f").write_text("x")
    git("add", "f", cwd=tmp_path / "r")
    git("commit", "-q", "-m", "second", cwd=tmp_path / "r")
    assert repo_root_and_sha(tmp_path / "r")[1] == sha


def test_a_worktree_shares_its_repositorys_root(tmp_path):
    sha = make_repo(tmp_path / "r")
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=tmp_path / "r")
    assert repo_root_and_sha(tmp_path / "wt")[1] == sha


def test_outside_a_repository_is_a_clear_error(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepository, match="not inside a git repository"):
        repo_root_and_sha(tmp_path / "plain")


def test_a_repository_without_commits_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    git("init", "-q", cwd=tmp_path / "empty")
    with pytest.raises(NotARepository, match="no commits yet"):
        repo_root_and_sha(tmp_path / "empty")


def test_a_directory_that_is_gone_is_a_clear_error(tmp_path):
    with pytest.raises(NotARepository, match="does not exist"):
        repo_root_and_sha(tmp_path / "removed-worktree")
