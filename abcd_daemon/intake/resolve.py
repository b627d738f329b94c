"""Which lane a payload belongs to (DESIGN §3.2 step 2, reference §5.3).

Rung 1: the payload's ``cwd`` resolved with real git to its root commit — this also
writes the session note and the lane's repository name. Rung 2 (a sub-agent's worktree
is removed when it stops, so its cwd is often gone): the session note some earlier
payload of the same session wrote. A session two lanes claim is refused, never guessed.
Git answers are cached per cwd for a short while (a burst of payloads from one checkout
runs git once); a failure is not cached, so a fix is seen by the next payload or retry.
"""

from __future__ import annotations

import os
import time
from typing import Callable

import msgspec

from ..config import Config
from ..errors import AbcdError, NotFoundError
from ..fsio.atomic import atomic_write
from ..locate.git import repo_root_and_sha
from ..locate.notes import note_session, session_lane
from ..paths import Home
from ..queue.survey import REPOSITORY_NOTE, RepositoryNote, lane_name
from ..store.lane import Lane


class Resolution(msgspec.Struct, kw_only=True):
    lane: Lane | None = None
    repo_root: str = ""
    via: str = ""  # cwd | session
    why_not: str = ""


class LaneResolver:
    def __init__(self, home: Home, config: Config, *, cache_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.home = home
        self.config = config
        self._cache: dict[str, tuple[float, tuple[str, str] | str]] = {}
        self._cache_s = cache_s
        self._clock = clock

    def _git(self, cwd: str) -> tuple[str, str] | str:
        now = self._clock()
        hit = self._cache.get(cwd)
        if hit is not None and now - hit[0] < self._cache_s:
            return hit[1]
        try:
            root, sha = repo_root_and_sha(cwd)
        except AbcdError as exc:
            return str(exc)  # not cached: the user may fix it and `abcd history retry` now
        value = (str(root), sha)
        self._cache[cwd] = (now, value)
        return value

    def resolve(self, session_id: str, cwd: str, *, now_ns: int) -> Resolution:
        """Resolve a payload's lane. Never raises; ``why_not`` explains a miss."""
        why = "the payload carries no cwd"
        if cwd:
            found = self._git(cwd)
            if isinstance(found, tuple):
                root, sha = found
                lane = Lane(self.home, sha)
                try:
                    note_session(lane, session_id, now_ns=now_ns, ttl_s=self.config.session_note_ttl_s)
                    self._remember_name(lane, root)
                except (AbcdError, OSError):
                    pass  # a note is a fallback for later payloads, never a reason to fail this one
                return Resolution(lane=lane, repo_root=root, via="cwd")
            why = found
        try:
            return Resolution(lane=session_lane(self.home, session_id), via="session")
        except NotFoundError:
            return Resolution(why_not=f"{why}, and no store has seen session {session_id}")
        except AbcdError as exc:
            return Resolution(why_not=str(exc))

    def _remember_name(self, lane: Lane, root: str) -> None:
        name = os.path.basename(root.rstrip("/"))
        if name and lane_name(lane) != name:
            lane.ensure()
            atomic_write(lane.path / REPOSITORY_NOTE, msgspec.json.encode(RepositoryNote(name=name)))
