"""The lane key of a checkout, fast: the root commit of HEAD, remembered per commit.

:func:`lane_root` answers what :func:`.git.root_sha` answers (the oldest root commit of
HEAD's history) without running git when it can:

1. Read HEAD's commit from git's files (:func:`.head.read_head`).
2. Look it up in ``<cache dir>/root-commits`` (:func:`abcd_daemon.paths.cache_dir`). A
   commit id hashes its whole history, so its root never changes: an entry is never
   stale, only absent.
3. Not there: walk back through loose, single-parent commits (the commits made since
   the last lookup usually are) to one that is cached, or to a loose root commit. A
   chain of single parents has the same roots as its end.
4. Otherwise ask git, and remember the answer for HEAD's commit.

The cache is derived data: a missing, foreign, oversized or garbled file is ignored and
rewritten; one that cannot be written costs the next call a git run, nothing more. Its
directory is verified like every directory abcd uses (:mod:`abcd_daemon.safedir`).
At most :data:`MAX_ENTRIES` commits are kept (the newest).
"""

from __future__ import annotations

from typing import Callable

from .head import Head, is_sha, loose_parents, read_head

FILE = "root-commits"
MAGIC = b"abcd-root-commits 1\n"
MAX_ENTRIES = 256
MAX_WALK = 64
_CAP = 64 << 10


def _cache(cache: str | None) -> str:
    if cache is not None:
        return cache
    from ..paths import cache_dir

    return cache_dir()


def load(cache: str) -> dict[str, str]:
    """commit → root, as stored; {} for anything but our own well-formed file."""
    from ..fsio.cache_file import read_cached

    data = read_cached(cache, FILE, _CAP)
    if data is None or not data.startswith(MAGIC):
        return {}
    table = {}
    for line in data[len(MAGIC):].decode("ascii", "replace").splitlines():
        commit, _, root = line.partition(" ")
        if is_sha(commit) and is_sha(root):
            table[commit] = root
    return table


def remember(cache: str, table: dict[str, str], commit: str, root: str) -> None:
    """Add ``commit → root`` and write the newest :data:`MAX_ENTRIES` back, atomically.
    Best effort: a cache that cannot be written is simply not used next time."""
    from ..fsio.cache_file import write_cached

    table.pop(commit, None)
    table[commit] = root
    keep = list(table.items())[-MAX_ENTRIES:]
    write_cached(cache, FILE, MAGIC + "".join(f"{c} {r}\n" for c, r in keep).encode("ascii"))


def walk(head: Head, table: dict[str, str]) -> str | None:
    """HEAD's root from the table and loose single-parent commits; None when unknown."""
    commit = head.commit
    for _ in range(MAX_WALK):
        if commit in table:
            return table[commit]
        parents = loose_parents(head.common_dir, commit)
        if parents == []:
            return commit  # a loose root commit: the chain's only root
        if parents is None or len(parents) != 1:
            return None  # packed, or a merge: its roots are git's to work out
        commit = parents[0]
    return None


def lane_root(cwd: str, *, cache: str | None = None,
              ask_git: Callable[[str], str] | None = None) -> str:
    """The root-commit SHA of the repository containing ``cwd`` (see the module
    rules). Raises :class:`.git.NotARepository` as :func:`.git.root_sha` does."""
    head = read_head(cwd)
    if head is not None:
        where = _cache(cache)
        table = load(where)
        root = walk(head, table)
        if root is not None:
            if head.commit not in table:
                remember(where, table, head.commit, root)
            return root
    if ask_git is None:
        from .git import root_sha as ask_git
    root = ask_git(cwd)
    if head is not None:
        remember(where, table, head.commit, root)
    return root
