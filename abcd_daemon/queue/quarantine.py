"""Quarantine: where a transcript the fail-closed scanner will never pass goes.

Rules (reference §4.4): only a permanent refusal (a property of the bytes) quarantines.
Under the entry's key lock, and only if the staged file still holds exactly the bytes
the drain read, the reason file is written first, then the ``.raw`` is *renamed* (never
copied) into ``quarantine/``, then its sidecar. The raw bytes stay owner-only (0o600
files in a 0o700 dir) and nothing retries them; only ``discard --yes`` removes them.
"""

from __future__ import annotations

import os

from ..config import Config
from ..errors import AbcdError
from ..fsio.atomic import atomic_write, fsync_dir
from ..fsio.guarded import read_guarded
from ..limits import SIDECAR_CAP
from ..paths import QUARANTINE
from ..store.lane import Lane
from ..store.record import format_rfc3339_ns
from .sidecar import (
    REASON_SCHEMA,
    REASON_SUFFIX,
    SIDECAR_SUFFIX,
    QuarantineReason,
    encode_json,
    stem_of,
)
from .stage import key_lock
from .staged import StagedEntry


class StagedCopyReplaced(AbcdError):
    """The staged file changed while it was being captured; left for the next pass."""


def file_identity(path) -> tuple | None:
    """What tells one staged copy from the next: the ``.raw``'s (inode, size, mtime ns)
    and its sidecar's bytes; None when the ``.raw`` is gone.

    Staging replaces a copy only by renaming new files over it, sidecar first, and every
    sidecar carries its stage time in nanoseconds, so a re-stage always changes the
    identity — even if the filesystem reuses the freed inode within one coarse mtime
    tick. Take it *before* reading the bytes it vouches for: a replacement after that
    shows as a mismatch (the copy is left for the next pass), never as a false match.
    """
    try:
        st = os.lstat(path)
    except OSError:
        return None
    sidecar = str(path)[: -len(".raw")] + SIDECAR_SUFFIX
    try:
        side = read_guarded(sidecar, SIDECAR_CAP, what="staging sidecar")
    except AbcdError:
        side = b""
    return (st.st_ino, st.st_size, st.st_mtime_ns, side)


def still_holds(path, identity) -> bool:
    """True when ``path`` is still the very copy whose ``identity`` was taken."""
    return identity is not None and file_identity(path) == identity


def quarantine(lane: Lane, entry: StagedEntry, identity, reason: str, *,
               config: Config, now_ns: int) -> str:
    """Move ``entry`` into quarantine with ``reason``. Returns the quarantined path.

    ``identity`` is :func:`file_identity` of the staged file taken before the drain read
    it. Raises :class:`StagedCopyReplaced` when the staged file changed meanwhile, and
    OSError/StorePathError when the move fails (the entry then stays staged and the
    reason file is removed again).
    """
    lane.ensure(QUARANTINE)
    stem = stem_of(entry.name)
    target = lane.quarantine / entry.name
    reason_path = lane.quarantine / (stem + REASON_SUFFIX)
    with key_lock(lane, entry.key, config):
        if not still_holds(entry.path, identity):
            raise StagedCopyReplaced(
                "the staged copy was replaced while it was being captured; "
                "it is left for the next pass"
            )
        note = QuarantineReason(
            schema=REASON_SCHEMA,
            session_id=entry.session_id,
            agent_id=entry.agent_id,
            reason=reason,
            staged_at=entry.staged_at,
            quarantined_at=format_rfc3339_ns(now_ns),
        )
        atomic_write(reason_path, encode_json(note))
        try:
            os.rename(entry.path, target)
        except OSError:
            try:
                os.unlink(reason_path)
            except OSError:
                pass
            raise
        try:
            os.rename(lane.staging / (stem + SIDECAR_SUFFIX), lane.quarantine / (stem + SIDECAR_SUFFIX))
        except OSError:
            pass
        fsync_dir(lane.quarantine)
        fsync_dir(lane.staging)
    return str(target)
