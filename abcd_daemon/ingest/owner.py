"""Which repository owns a transcript: the ownership ladder.

Rungs, first answer wins (reference §5.6, DESIGN §3.2 step 2):

0. ``--into <repo>``: an explicit destination overrides everything it is given (the
   caller applies it; :func:`into_owner` resolves it).
1. The ``cwd`` recorded in the transcript's lines, session before file: a sub-agent
   takes its session's main-thread answer first (owned *or* ambiguous), then its own
   cwds. Every cwd that resolves must name the same repository — one session in two
   repositories is ambiguous and skipped, never guessed. A cwd that is gone or not in a
   repository (a removed worktree) does not vote.
2. A lane that already knows the session (its note, a record or a staged entry):
   exactly one, else ambiguous.
3. For the JSONL store harness, whose records carry no cwd: the git repository that
   contains the transcript file itself.

Otherwise the transcript is unowned, with the reason — listed, never guessed. Each
distinct directory is resolved with git once per run (:class:`GitCache`), through
:func:`abcd_daemon.locate.git.repo_root_and_sha` (the one definition of a lane key).
"""

from __future__ import annotations

import os
from typing import Callable

import msgspec

from ..errors import AbcdError
from ..locate.git import repo_root_and_sha
from .facts import JSONL_STORE

OWNED, AMBIGUOUS, UNOWNED = "owned", "ambiguous", "unowned"


class Owner(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A decision. ``via``: into | cwd | session | file-cwd | lane | file-location."""

    status: str
    root_sha: str = ""
    repo_root: str = ""
    via: str = ""
    reason: str = ""

    @property
    def owned(self) -> bool:
        return self.status == OWNED


class GitCache:
    """Directory → (checkout root, root SHA) or the reason it has none; git runs once
    per distinct directory. Relative directories (anonymised or foreign cwds, Windows
    paths) are refused without running git: they would resolve against our own cwd."""

    def __init__(self, resolve: Callable = repo_root_and_sha) -> None:
        self._resolve = resolve
        self._cache: dict[str, tuple[str, str] | str] = {}

    def resolve(self, directory: str) -> tuple[str, str] | str:
        if directory not in self._cache:
            if not os.path.isabs(directory):
                self._cache[directory] = "not an absolute path"
            else:
                try:
                    root, sha = self._resolve(directory)
                    self._cache[directory] = (str(root), sha)
                except AbcdError as exc:
                    self._cache[directory] = str(exc)
        return self._cache[directory]


def into_owner(repo: str, git: GitCache) -> Owner:
    """The owner named by ``--into``. Raises nothing; an unusable path is unowned."""
    got = git.resolve(os.path.abspath(os.path.expanduser(repo)))
    if isinstance(got, str):
        return Owner(status=UNOWNED, reason=f"--into {repo}: {got}")
    return Owner(status=OWNED, root_sha=got[1], repo_root=got[0], via="into")


def _by_cwds(cwds: tuple[str, ...], git: GitCache, via: str, session_id: str):
    """(Owner or None, failures). None when no cwd resolved."""
    found: dict[str, tuple[str, str]] = {}
    failures: list[tuple[str, str]] = []
    for cwd in cwds:
        got = git.resolve(cwd)
        if isinstance(got, str):
            failures.append((cwd, got))
        else:
            found.setdefault(got[1], (got[0], cwd))
    if len(found) == 1:
        sha, (root, _) = next(iter(found.items()))
        return Owner(status=OWNED, root_sha=sha, repo_root=root, via=via), failures
    if len(found) > 1:
        named = ", ".join(f"{sha[:12]} at {cwd}" for sha, (_, cwd) in sorted(found.items()))
        return Owner(status=AMBIGUOUS, via=via, reason=(
            f"session {session_id} ran in {len(found)} repositories ({named}); not guessed")), failures
    return None, failures


def decide(*, session_id: str, harness: str, path: str, cwds: tuple[str, ...],
           session: Owner | None, known_lanes: tuple[str, ...], git: GitCache,
           is_main: bool) -> Owner:
    """Run rungs 1-3 for one transcript (rung 0 is the caller's). Never raises.

    ``session`` is the decision for the session's main thread (``None`` for a main
    thread itself, or when the session has no main-thread file).
    """
    if session is not None and session.status in (OWNED, AMBIGUOUS):
        return msgspec.structs.replace(session, via="session" if session.owned else session.via)
    owner, failures = _by_cwds(cwds, git, "cwd" if is_main else "file-cwd", session_id)
    if owner is not None:
        return owner
    if len(known_lanes) == 1:
        return Owner(status=OWNED, root_sha=known_lanes[0], via="lane")
    if len(known_lanes) > 1:
        return Owner(status=AMBIGUOUS, via="lane", reason=(
            f"session {session_id} is known to {len(known_lanes)} lanes "
            f"({', '.join(s[:12] for s in known_lanes)}); not guessed"))
    if harness == JSONL_STORE:
        here = os.path.dirname(os.path.abspath(path))
        got = git.resolve(here)
        if isinstance(got, tuple):
            return Owner(status=OWNED, root_sha=got[1], repo_root=got[0], via="file-location")
        why = f"its records carry no cwd and no repository contains {here} ({got})"
    elif failures:
        cwd, got = failures[0]
        why = f"no repository at {cwd} ({got})"
        if len(failures) > 1:
            why += f" nor at {len(failures) - 1} other cwd(s)"
    else:
        why = "no cwd is recorded in its lines"
    return Owner(status=UNOWNED, reason=f"{why}, and no lane knows session {session_id}")
