"""Listing the staging queue (and the quarantine) of one lane.

Rules (reference §1.4-1.5, seed 003):
- A ``.raw`` with a readable sidecar carries the sidecar's lineage.
- A ``.raw`` with no sidecar is legacy: its session id comes from the filename and it
  drains as a main thread, so an upgrade never strands a backlog.
- A sidecar that is present but unusable, or a ``.raw`` that is not a regular file, is
  listed with ``error`` set and is never drained; it is reported on every pass.
- ``overdue`` means staged longer than the TTL: priority and notices, never deletion.
Listing reads sidecars only (never the staged bytes) and never raises for one bad entry.
"""

from __future__ import annotations

import os
import stat

from ..errors import AbcdError
from ..fsio.guarded import read_guarded
from ..ids import is_valid_id
from ..limits import SIDECAR_CAP
from ..store.lane import Lane
from ..store.record import format_rfc3339_ns
from .sidecar import (
    RAW_SUFFIX,
    REASON_SUFFIX,
    SIDECAR_SUFFIX,
    StageSidecar,
    decode_reason,
    decode_sidecar,
    legacy_session_id,
    stem_of,
)
from .entries import QuarantinedEntry, StagedEntry


def read_sidecar(path) -> StageSidecar:
    """Read and validate one sidecar. Raises AbcdError (SidecarError or ReadRefused)."""
    return decode_sidecar(read_guarded(path, SIDECAR_CAP, what="staging sidecar"))


def raw_names(directory) -> list[str]:
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if n.endswith(RAW_SUFFIX) and not n.startswith("."))


def describe(lane: Lane, name: str, *, now_ns: int, ttl_s: float) -> tuple[StagedEntry, StageSidecar | None]:
    """List one staged entry: (entry, its sidecar or None). Never raises."""
    path = lane.staging / name
    sidecar_path = lane.staging / (stem_of(name) + SIDECAR_SUFFIX)
    entry = StagedEntry(root_sha=lane.root_sha, name=name, path=str(path), bytes=0)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        entry.error = "the staged file vanished while it was listed"
        return entry, None
    entry.bytes = st.st_size
    mtime_ns = st.st_mtime_ns
    if not stat.S_ISREG(st.st_mode):
        entry.error = ("the staged entry is not a regular file (a symlink, FIFO or device); "
                       "it is never drained — inspect it, then `abcd history discard`")
    sidecar = None
    if os.path.lexists(sidecar_path):
        entry.sidecar_path = str(sidecar_path)
        try:
            sidecar = read_sidecar(sidecar_path)
        except AbcdError as exc:
            entry.error = entry.error or str(exc)
            entry.session_id = ""
    else:
        entry.legacy = True
        entry.session_id = legacy_session_id(name)
        if not is_valid_id(entry.session_id):
            entry.error = entry.error or (
                "legacy staged file without a sidecar whose name carries no usable session id"
            )
    if sidecar is not None:
        _from_sidecar(entry, sidecar)
    else:
        entry.staged_ns = mtime_ns
    _age(entry, now_ns, ttl_s)
    if entry.error:
        sidecar = None
    return entry, sidecar


_LISTED_FIELDS = ("session_id", "agent_id", "agent_type", "parent_agent_id", "spawn_depth",
                  "spawn_attribution", "lineage_source", "source_path", "unsettled")


def _from_sidecar(entry: StagedEntry, sidecar: StageSidecar) -> None:
    for field in _LISTED_FIELDS:
        setattr(entry, field, getattr(sidecar, field))
    entry.staged_ns = sidecar.staged_ns


def _age(entry: StagedEntry, now_ns: int, ttl_s: float) -> None:
    entry.staged_at = format_rfc3339_ns(entry.staged_ns)
    entry.overdue = entry.staged_ns > 0 and (now_ns - entry.staged_ns) > ttl_s * 1e9


def entry_for(lane: Lane, name: str, sidecar: StageSidecar, size: int, *, now_ns: int,
              ttl_s: float) -> StagedEntry:
    """The listing of an entry just written with ``sidecar`` (no re-read needed)."""
    entry = StagedEntry(root_sha=lane.root_sha, name=name, path=str(lane.staging / name),
                        bytes=size,
                        sidecar_path=str(lane.staging / (stem_of(name) + SIDECAR_SUFFIX)))
    _from_sidecar(entry, sidecar)
    _age(entry, now_ns, ttl_s)
    return entry


def list_staged(lane: Lane, *, now_ns: int, ttl_s: float) -> list[StagedEntry]:
    """Every staged entry of ``lane``, oldest first (by filename = arrival stamp)."""
    return [describe(lane, n, now_ns=now_ns, ttl_s=ttl_s)[0] for n in raw_names(lane.staging)]


def list_quarantined(lane: Lane) -> list[QuarantinedEntry]:
    """Every quarantined entry with its reason; an unreadable reason is listed with
    ``error`` and the session id recovered from the filename."""
    out = []
    for name in raw_names(lane.quarantine):
        path = lane.quarantine / name
        reason_path = lane.quarantine / (stem_of(name) + REASON_SUFFIX)
        entry = QuarantinedEntry(root_sha=lane.root_sha, name=name, path=str(path), bytes=0)
        try:
            st = os.lstat(path)
            entry.bytes = st.st_size
            entry.quarantined_at = format_rfc3339_ns(st.st_mtime_ns)
        except OSError:
            continue
        try:
            reason = decode_reason(read_guarded(reason_path, SIDECAR_CAP, what="quarantine reason"))
            entry.session_id, entry.agent_id = reason.session_id, reason.agent_id
            entry.reason, entry.quarantined_at = reason.reason, reason.quarantined_at
            entry.reason_path = str(reason_path)
        except AbcdError as exc:
            entry.error = str(exc)
            entry.session_id = legacy_session_id(name)
        out.append(entry)
    return out
