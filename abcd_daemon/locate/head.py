"""A checkout's HEAD commit and a loose commit's parents, read from git's own files.

The CLI names its lane by the repository's root commit, and asking git for that walks
the whole history (``git log --max-parents=0 HEAD``: milliseconds on a small repository,
far more on a large one) on every start. A commit's root is a pure function of the
commit (its id hashes its whole history), so :mod:`.root_cache` can remember it, keyed
by commit. This module finds the key without running git.

Rules:
- Only the plain layouts are read: a ``.git`` directory, or a ``.git`` file naming a
  git dir (worktrees, submodules) with an optional ``commondir``; HEAD detached or a
  symbolic ref (chains followed up to 5 deep) found loose in the git dir or common dir,
  or in ``packed-refs``. Anything else (reftable, an unborn branch, ``$GIT_DIR``-style
  setups, an unreadable or oversized file) answers ``None``: the caller asks git.
- The search for ``.git`` walks up from ``cwd`` to the filesystem root, as git does
  without ``GIT_CEILING_DIRECTORIES`` (which :func:`.git.git_env` also drops).
- :func:`loose_parents` inflates a loose object only (never a pack) and answers
  ``None`` unless it is a commit.
- A git dir owned by another uid answers ``None``: git itself refuses such a repository
  unless ``safe.directory`` says otherwise, so git is asked and decides.
- Nothing is written; every read is capped at :data:`READ_CAP` bytes.
"""

from __future__ import annotations

import os
import stat

READ_CAP = 1 << 20
_HEX = frozenset("0123456789abcdef")


def is_sha(text: str) -> bool:
    """A full object id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits. (No regex:
    this runs at every CLI start, before ``re`` has compiled anything.)"""
    return len(text) in (40, 64) and _HEX.issuperset(text)


class Head:
    """Where a checkout's refs live and the commit its HEAD names."""

    __slots__ = ("git_dir", "common_dir", "commit")

    def __init__(self, git_dir: str, common_dir: str, commit: str) -> None:
        self.git_dir, self.common_dir, self.commit = git_dir, common_dir, commit


def _read(path: str) -> bytes | None:
    """A regular file's bytes, or None: opened non-blocking (a FIFO planted in a
    checkout never hangs the CLI) and refused unless regular and within the cap."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, READ_CAP + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= READ_CAP else None


def _git_dir(cwd: str) -> str | None:
    here = os.path.abspath(cwd)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            text = (_read(dot) or b"").decode("utf-8", "replace").strip()
            if not text.startswith("gitdir:"):
                return None
            target = text[len("gitdir:"):].strip()
            return os.path.normpath(os.path.join(here, target))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _common_dir(git_dir: str) -> str:
    text = _read(os.path.join(git_dir, "commondir"))
    if not text:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, text.decode("utf-8", "replace").strip()))


def _packed(common_dir: str, ref: str) -> str | None:
    data = _read(os.path.join(common_dir, "packed-refs")) or b""
    want = ref.encode()
    for line in data.splitlines():
        sha, _, name = line.partition(b" ")
        if name == want:
            text = sha.decode("ascii", "replace")
            return text if is_sha(text) else None
    return None


def _resolve(git_dir: str, common_dir: str, ref: str) -> str | None:
    for _ in range(5):
        if not ref.startswith("refs/") or ".." in ref:
            return None
        found = _read(os.path.join(git_dir, ref)) or _read(os.path.join(common_dir, ref))
        if found is None:
            return _packed(common_dir, ref)
        text = found.decode("utf-8", "replace").strip()
        if is_sha(text):
            return text
        if not text.startswith("ref:"):
            return None
        ref = text[len("ref:"):].strip()
    return None


def read_head(cwd: str) -> Head | None:
    """The HEAD commit of the checkout containing ``cwd``, read from git's files;
    None whenever the layout is not a plain one (see the module rules)."""
    git_dir = _git_dir(cwd)
    try:
        if git_dir is None or os.stat(git_dir).st_uid != os.geteuid():
            return None
    except OSError:
        return None
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    common = _common_dir(git_dir)
    text = head.decode("utf-8", "replace").strip()
    if is_sha(text):
        return Head(git_dir, common, text)
    if not text.startswith("ref:"):
        return None
    commit = _resolve(git_dir, common, text[len("ref:"):].strip())
    return Head(git_dir, common, commit) if commit else None


def loose_parents(common_dir: str, commit: str) -> list[str] | None:
    """The parents of ``commit`` when it is a loose commit object in ``common_dir``
    (``[]`` for a root commit); None when it is packed, absent or not a commit."""
    import zlib

    if not is_sha(commit):
        return None
    raw = _read(os.path.join(common_dir, "objects", commit[:2], commit[2:]))
    if raw is None:
        return None
    try:
        data = zlib.decompressobj().decompress(raw, READ_CAP)
    except zlib.error:
        return None
    header, nul, body = data.partition(b"\0")
    if not nul or not header.startswith(b"commit "):
        return None
    parents = []
    for line in body.split(b"\n\n", 1)[0].split(b"\n"):
        if line.startswith(b"parent "):
            sha = line[len(b"parent "):].decode("ascii", "replace")
            if not is_sha(sha):
                return None
            parents.append(sha)
    return parents
