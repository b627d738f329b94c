"""Resolve a directory to its repository's root-commit SHA with real ``git``.

The lane key is the repository's root commit, so every clone and worktree of one
repository shares a lane. A repository with several root commits (merged histories)
is keyed on the oldest by committer date, ties by SHA — stable across clones.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import InputError

_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_NAMESPACE")


class NotARepository(InputError):
    """The directory is gone, is not inside a git repository, or has no commits."""


def git_env() -> dict[str, str]:
    """The environment for git subprocesses: the caller's, minus variables that would
    point git at another repository."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(), capture_output=True, text=True, timeout=30
    )


def repo_root_and_sha(cwd) -> tuple[Path, str]:
    """Return (checkout top level, root-commit SHA) for ``cwd``.

    Raises :class:`NotARepository` with a message that says which of the three cases
    it is: the directory does not exist, it is not in a repository, or the repository
    has no commits yet.
    """
    path = Path(cwd)
    if not path.is_dir():
        raise NotARepository(
            f"directory {str(path)!r} does not exist (a removed worktree?)",
            hint="run abcd from inside the repository, or name it",
        )
    top = _git(["rev-parse", "--show-toplevel"], path)
    if top.returncode != 0:
        raise NotARepository(
            f"{str(path)!r} is not inside a git repository",
            hint="abcd files transcripts per repository; run it inside a git checkout",
        )
    sha = _oldest_root(path)
    if sha is None:
        raise NotARepository(
            f"the repository at {top.stdout.strip()!r} has no commits yet",
            hint="make a first commit; the lane is named by the root commit",
        )
    return Path(top.stdout.strip()), sha


def _oldest_root(path: Path) -> str | None:
    """The oldest root commit of HEAD's history (committer date, then SHA), or None."""
    roots = _git(["log", "--max-parents=0", "--format=%ct %H", "HEAD"], path)
    lines = [ln.split() for ln in roots.stdout.splitlines() if ln.strip()]
    if roots.returncode != 0 or not lines:
        return None
    lines.sort(key=lambda parts: (int(parts[0]), parts[1]))
    return lines[0][1]


def root_sha(cwd) -> str:
    """The root-commit SHA of the repository containing ``cwd``, with one ``git`` run
    where :func:`repo_root_and_sha` needs two (the CLI's start-up; the top level is
    asked for only to word a refusal). Raises :class:`NotARepository` as it does."""
    path = Path(cwd)
    sha = _oldest_root(path) if path.is_dir() else None
    return sha if sha is not None else repo_root_and_sha(cwd)[1]
