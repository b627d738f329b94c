"""A lane: one repository's corner of the store, named by its root-commit SHA.

``Lane`` computes names (via :class:`~abcd_daemon.paths.Home`); ``ensure`` creates and
verifies the owner-only chain ``ABCD_HOME/transcripts/<sha>/<dir>`` one level at a time.
Every function that writes into a lane goes through ``ensure`` first.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..fsio.dirs import ensure_chain
from ..ids import ROOT_SHA_RE, check_root_sha
from ..paths import EMPTY_MAINS, GAP_MARKER, QUARANTINE, RECORDS, SESSIONS, STAGING, Home


class Lane:
    """Names inside one lane. Constructing a Lane validates the SHA and touches nothing."""

    __slots__ = ("home", "root_sha")

    def __init__(self, home: Home, root_sha: str) -> None:
        self.home = home
        self.root_sha = check_root_sha(root_sha)

    def __repr__(self) -> str:
        return f"Lane({self.root_sha[:12]})"

    @property
    def path(self) -> Path:
        return self.home.lane(self.root_sha)

    @property
    def records(self) -> Path:
        return self.path / RECORDS

    @property
    def staging(self) -> Path:
        return self.path / STAGING

    @property
    def stage_locks(self) -> Path:
        return self.staging / ".locks"

    @property
    def quarantine(self) -> Path:
        return self.path / QUARANTINE

    @property
    def sessions(self) -> Path:
        return self.path / SESSIONS

    @property
    def empty_mains(self) -> Path:
        return self.path / EMPTY_MAINS

    @property
    def gap_marker(self) -> Path:
        return self.path / GAP_MARKER

    @property
    def lock_file(self) -> Path:
        return self.records / ".lock"

    def ensure(self, *dirs: str) -> "Lane":
        """Create and verify the lane and the named sub-directories (all 0o700).
        Raises :class:`~abcd_daemon.errors.StorePathError`."""
        ensure_chain(self.home.root, "transcripts", self.root_sha)
        for name in dirs:
            ensure_chain(self.home.root, "transcripts", self.root_sha, name)
        return self

    def exists(self) -> bool:
        return self.path.is_dir()


def list_lanes(home: Home) -> list[Lane]:
    """Every lane under the home, sorted by SHA. Names that are not a root SHA, and
    symlinks, are ignored. An absent store is an empty list."""
    try:
        names = sorted(os.listdir(home.transcripts))
    except (FileNotFoundError, NotADirectoryError):
        return []
    lanes = []
    for name in names:
        if ROOT_SHA_RE.fullmatch(name) and not os.path.islink(home.transcripts / name):
            lanes.append(Lane(home, name))
    return lanes
