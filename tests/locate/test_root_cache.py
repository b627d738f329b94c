"""The CLI's lane key without running git: always git's answer, remembered per commit."""

import os

import pytest

from abcd_daemon.locate.git import NotARepository, root_sha
from abcd_daemon.locate.head import read_head
from abcd_daemon.locate.root_cache import FILE, lane_root, load

from ..conftest import git, make_repo


class Git:
    """``root_sha`` that counts its calls (the real one: real git runs)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, cwd) -> str:
        self.calls += 1
        return root_sha(cwd)


def commit(repo, name: str) -> None:
    (repo / name).write_text(name)
    git("add", name, cwd=repo)
    git("commit", "-q", "-m", name, cwd=repo)


@pytest.fixture
def cache(tmp_path):
    return str(tmp_path / "cache")


def test_the_first_lookup_asks_git_and_the_next_asks_nothing(tmp_path, cache):
    sha = make_repo(tmp_path / "r")
    git("gc", "-q", cwd=tmp_path / "r")  # packed: nothing to walk, git must answer
    asked = Git()
    assert lane_root(str(tmp_path / "r"), cache=cache, ask_git=asked) == sha
    assert asked.calls == 1
    (tmp_path / "r" / "sub").mkdir()
    assert lane_root(str(tmp_path / "r" / "sub"), cache=cache, ask_git=asked) == sha
    assert asked.calls == 1
    assert oct(os.stat(os.path.join(cache, FILE)).st_mode & 0o777) == "0o600"


def test_commits_made_since_the_last_lookup_are_walked_without_git(tmp_path, cache):
    repo = tmp_path / "r"
    sha = make_repo(repo)
    git("gc", "-q", cwd=repo)
    asked = Git()
    lane_root(str(repo), cache=cache, ask_git=asked)
    for name in ("a", "b", "c"):
        commit(repo, name)
    assert lane_root(str(repo), cache=cache, ask_git=asked) == sha
    assert asked.calls == 1


def test_a_fresh_repository_is_resolved_from_its_loose_root_commit(tmp_path, cache):
    sha = make_repo(tmp_path / "r")
    asked = Git()
    assert lane_root(str(tmp_path / "r"), cache=cache, ask_git=asked) == sha
    assert asked.calls == 0  # the root commit itself is loose and parentless


def test_packed_history_and_packed_refs_fall_back_to_git_once_and_agree(tmp_path, cache):
    repo = tmp_path / "r"
    sha = make_repo(repo)
    commit(repo, "a")
    git("gc", "-q", cwd=repo)  # objects into a pack, refs into packed-refs
    assert read_head(str(repo)).commit == git("rev-parse", "HEAD", cwd=repo)
    asked = Git()
    assert lane_root(str(repo), cache=cache, ask_git=asked) == sha
    assert asked.calls == 1
    assert lane_root(str(repo), cache=cache, ask_git=asked) == sha and asked.calls == 1


def test_a_worktree_and_a_detached_head_resolve_to_the_repositorys_root(tmp_path, cache):
    repo = tmp_path / "r"
    sha = make_repo(repo)
    commit(repo, "a")
    git("worktree", "add", "-q", "--detach", str(tmp_path / "wt"), "HEAD~1", cwd=repo)
    head = read_head(str(tmp_path / "wt"))
    assert head.commit == git("rev-parse", "HEAD", cwd=tmp_path / "wt")
    assert head.common_dir == str(repo / ".git")
    assert lane_root(str(tmp_path / "wt"), cache=cache, ask_git=Git()) == sha


def test_an_orphan_branch_gets_its_own_root_and_a_merge_of_two_histories_the_oldest(
        tmp_path, cache):
    repo = tmp_path / "r"
    first = make_repo(repo)
    asked = Git()
    lane_root(str(repo), cache=cache, ask_git=asked)
    git("checkout", "-q", "--orphan", "other", cwd=repo)
    git("rm", "-rfq", ".", cwd=repo)
    commit(repo, "elsewhere")
    second = git("rev-parse", "HEAD", cwd=repo)
    assert lane_root(str(repo), cache=cache, ask_git=asked) == second != first
    git("merge", "-q", "--allow-unrelated-histories", "-m", "join", "master", cwd=repo)
    calls = asked.calls
    assert lane_root(str(repo), cache=cache, ask_git=asked) == root_sha(repo)
    assert asked.calls == calls + 1  # a merge's roots are git's to work out


def test_outside_a_repository_and_before_the_first_commit_the_errors_are_gits(
        tmp_path, cache):
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepository, match="not inside a git repository"):
        lane_root(str(tmp_path / "plain"), cache=cache)
    (tmp_path / "empty").mkdir()
    git("init", "-q", cwd=tmp_path / "empty")
    with pytest.raises(NotARepository, match="no commits yet"):
        lane_root(str(tmp_path / "empty"), cache=cache)


def test_a_cache_file_others_could_write_is_ignored_and_rewritten(tmp_path, cache):
    repo = tmp_path / "r"
    sha = make_repo(repo)
    commit(repo, "a")
    git("gc", "-q", cwd=repo)  # nothing loose: only the cache or git can answer
    os.makedirs(cache, mode=0o700)
    head = git("rev-parse", "HEAD", cwd=repo)
    path = os.path.join(cache, FILE)
    with open(path, "w") as f:
        f.write(f"abcd-root-commits 1\n{head} {'f' * 40}\n")  # a forged answer
    os.chmod(path, 0o666)
    asked = Git()
    assert lane_root(str(repo), cache=cache, ask_git=asked) == sha and asked.calls == 1
    assert load(cache) == {head: sha}
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


def test_a_fifo_in_place_of_head_never_hangs_and_git_decides(tmp_path, cache):
    repo = tmp_path / "r"
    sha = make_repo(repo)
    head = repo / ".git" / "HEAD"
    saved = head.read_bytes()
    head.unlink()
    os.mkfifo(head)  # no writer: a blocking open would wait forever
    assert read_head(str(repo)) is None
    head.unlink()
    head.write_bytes(saved)
    assert lane_root(str(repo), cache=cache) == sha
