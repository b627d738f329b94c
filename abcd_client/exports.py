"""Files abcd writes for the user to read (reconstruct artefacts and telemetry).

Rules:
- They hold transcript text (redacted, but still what somebody said in a private
  session), so they are written owner-only: :data:`EXPORT_MODE`, never wider.
- A file written inside a git work tree that git does not ignore is one ``git add .``
  away from being published: :func:`warn_if_committable` says so on stderr, one line
  per file, naming it and the exclude file that keeps it out of commits. It asks the
  real ``git`` (``check-ignore``), so every ignore source counts: ``.gitignore`` at any
  level, ``.git/info/exclude``, ``core.excludesFile``. Outside a work tree, or where
  git cannot answer, nothing is said.
"""

from __future__ import annotations

import os

from .output import note

EXPORT_MODE = 0o600


def _git(args: list[str], cwd: str):
    """git's CompletedProcess, or None when git cannot be run (imported here: most
    exports are outside any work tree and run no git)."""
    import subprocess

    from abcd_daemon.locate.git import git_env

    try:
        return subprocess.run(["git", *args], cwd=cwd, env=git_env(), capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _under_a_git_dir(directory: str) -> bool:
    """True when ``directory`` or a parent holds a ``.git`` (a work tree's mark; git's
    own environment overrides are scrubbed by :func:`git_env`, so none other counts)."""
    path = os.path.realpath(directory)
    while True:
        if os.path.lexists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def committable(paths: list[str]) -> list[tuple[str, str, str]]:
    """The paths (all in one directory) that lie in a git work tree and are not ignored:
    (path, path relative to the work tree, the repository's exclude file)."""
    if not paths:
        return []
    directory = os.path.dirname(paths[0])
    if not _under_a_git_dir(directory):
        return []  # no work tree can hold it: spare the git run
    top = _git(["rev-parse", "--show-toplevel"], directory)
    if top is None or top.returncode != 0:
        return []
    root = top.stdout.strip()
    exclude = _git(["rev-parse", "--path-format=absolute", "--git-path", "info/exclude"], directory)
    exclude_path = exclude.stdout.strip() if exclude is not None and exclude.returncode == 0 else ""
    out = []
    for path in paths:
        checked = _git(["check-ignore", "-q", "--", path], directory)
        if checked is not None and checked.returncode == 1:  # 0 ignored, 128 git failed
            out.append((path, os.path.relpath(os.path.realpath(path), os.path.realpath(root)),
                        exclude_path))
    return out


def warn_if_committable(paths: list[str]) -> None:
    """One stderr line per written file that git would let ``git add`` pick up."""
    for path, relative, exclude in committable(paths):
        where = f"{exclude}" if exclude else "the work tree's .gitignore"
        note(f"abcd: {path} is inside a git work tree and not ignored — it holds transcript "
             f"text; keep it out of commits: echo '/{relative}' >> {where}")
