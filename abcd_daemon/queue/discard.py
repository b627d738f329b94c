"""Discard: the only deletion of an unstored transcript (reference §4.5).

Takes a bare entry filename ending in ``.raw`` — no separator, no glob character, not
``.``/``..``, not starting with ``.`` — looks for it in ``staging/`` then
``quarantine/``, and removes it with its sidecar and reason file under the entry's key
lock. Never called by a drain, a hook or age; the CLI demands ``--yes``.
"""

from __future__ import annotations

import os
import stat

from ..config import Config
from ..errors import InputError, NotFoundError
from ..fsio.atomic import fsync_dir
from ..store.lane import Lane
from .results import DiscardResult
from .sidecar import RAW_SUFFIX, REASON_SUFFIX, SIDECAR_SUFFIX, legacy_session_id, stem_of
from .stage import key_lock
from .staged import describe


def check_entry_name(name: str) -> str:
    """Return ``name`` if it is a bare staged-entry filename, else raise InputError."""
    if (
        not name.endswith(RAW_SUFFIX)
        or name.startswith(".")
        or any(c in name for c in "/\\*?[]\0")
        or name in (".", "..")
        or len(name) > 255
    ):
        raise InputError(
            f"{name!r} is not a bare staged-entry filename (like "
            "20260101T000000.000000000Z-<id>.raw); paths, globs and '..' are refused",
            hint="`abcd history staged` lists the entry names",
        )
    return name


def discard(lane: Lane, name: str, *, config: Config, now_ns: int) -> DiscardResult:
    """Delete one staged or quarantined entry and its side files. Raises InputError
    for a bad name and NotFoundError when it is neither staged nor quarantined."""
    check_entry_name(name)
    stem = stem_of(name)
    for directory in (lane.staging, lane.quarantine):
        path = directory / name
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise InputError(f"{name!r} is not a file; refusing to remove it")
        key = legacy_session_id(name) or stem
        if directory == lane.staging:
            entry, _ = describe(lane, name, now_ns=now_ns, ttl_s=config.staged_ttl_s)
            key = entry.key or key
        removed = []
        with key_lock(lane, key, config):
            for victim in (path, directory / (stem + SIDECAR_SUFFIX), directory / (stem + REASON_SUFFIX)):
                try:
                    os.unlink(victim)
                    removed.append(str(victim))
                except FileNotFoundError:
                    pass
            fsync_dir(directory)
            return DiscardResult(path=str(path), bytes=st.st_size, removed=removed)
    raise NotFoundError(f"{name!r} is neither staged nor quarantined for this repository")
