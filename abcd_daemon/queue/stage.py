"""Staging one transcript: raw bytes plus a lineage sidecar, idempotent per
(session_id, agent_id), behind a per-key lock.

Rules (reference §4.1, seed 003, DESIGN §3.2 step 6):
- Files are ``<stamp>-<key>.stage.json`` then ``<stamp>-<key>.raw`` (0o600), key = agent
  id for a sub-agent, else the session id; the sidecar is written first and removed if
  the ``.raw`` write fails.
- A prior copy with identical bytes makes this a no-op — unless this stage comes from a
  hook and the prior one did not (the watcher or ingest got there first): then the
  sidecar is rewritten, so the payload's lineage is what is stored. Different bytes
  rewrite the same path (the queue position is kept) — last writer wins, except that a
  stage from the files over a prior a hook staged keeps the hook's lineage
  (:func:`~abcd_daemon.store.lineage.prefer_hook`: the file stage may have been planned
  before the payload's stage landed).
- Keys are locked through a fixed stripe of lock files under ``staging/.locks/``
  (``LOCK_STRIPES`` of them, chosen by a hash of the key): a burst of simultaneous
  sub-agent completions does not queue behind one lock (the Go system's single lock
  lost transcripts past ~50 at once), two stages of one key yield one copy, and lock
  files are never created or removed per entry (each costs a durable metadata write).
- Cost: one directory listing, at most one sidecar read and one block-by-block
  compare with the prior copy, one sidecar write and one rename of the staged temp
  file (:func:`stage_file`: intake streams a transcript of any size into a temp file
  in ``staging/`` and stages that, never holding it in memory).
"""

from __future__ import annotations

import os
import zlib

import msgspec

from ..config import Config
from ..errors import InputError
from ..fsio.atomic import atomic_write_all, fsync_dir, refuse_symlink_leaf, temp_file
from ..fsio.dirs import ensure_dir
from ..fsio.locks import file_lock
from ..paths import STAGING
from ..store.lane import Lane
from ..store.meta import HOOK, CaptureMeta
from ..store.chunks import same_prefix
from ..store.lineage import prefer_hook
from ..store.record import compact_stamp
from .sidecar import RAW_SUFFIX, SIDECAR_SUFFIX, STAMP_LEN, encode_json, make_sidecar, stem_of
from .staged import StagedEntry, describe, entry_for


class StageResult(msgspec.Struct, kw_only=True):
    entry: StagedEntry
    wrote: bool
    replaced: bool = False
    replaced_bytes: int = 0


LOCK_STRIPES = 64


def key_lock(lane: Lane, key: str, config: Config):
    """The staging lock for ``key`` (a context manager): one of a fixed stripe of lock
    files, so distinct keys rarely contend and the lock directory never grows."""
    ensure_dir(lane.stage_locks)
    stripe = zlib.crc32(key.encode("utf-8")) % LOCK_STRIPES
    return file_lock(lane.stage_locks / f"{stripe:02d}.lock", config.stage_lock_timeout_s)


def _prior(lane: Lane, names: list[str], meta: CaptureMeta, key: str, now_ns: int,
           config: Config):
    """The newest staged copy of ``meta``'s (session, agent) and its sidecar, or
    ``(None, None)``."""
    suffix = f"-{key}{RAW_SUFFIX}"
    prior = prior_sidecar = None
    for name in sorted(names):
        if not name.endswith(suffix) or len(name) != STAMP_LEN + len(suffix):
            continue
        entry, sidecar = describe(lane, name, now_ns=now_ns, ttl_s=config.staged_ttl_s)
        if entry.error:
            continue
        if (entry.session_id, entry.agent_id) == (meta.session_id, meta.agent_id):
            prior, prior_sidecar = entry, sidecar
    return prior, prior_sidecar


def _unlink_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _drop_orphan_sidecars(lane: Lane, names: list[str], key: str) -> None:
    """Remove this key's sidecars whose ``.raw`` never landed (a stage killed between
    its two writes). Safe under the key lock: no stage of this key is in flight, and a
    sidecar without its transcript holds no transcript text."""
    suffix = f"-{key}{SIDECAR_SUFFIX}"
    present = set(names)
    for name in names:
        if name.endswith(suffix) and len(name) == STAMP_LEN + len(suffix):
            if name[: -len(SIDECAR_SUFFIX)] + RAW_SUFFIX not in present:
                _unlink_quietly(lane.staging / name)


def stage(
    lane: Lane,
    raw: bytes,
    meta: CaptureMeta,
    *,
    config: Config,
    now_ns: int,
    source_path: str = "",
    repo_root: str = "",
    unsettled: bool = False,
) -> StageResult:
    """Stage ``raw`` for ``meta`` (written to a staging temp file, then
    :func:`stage_file`). Returns what happened; raises InputError (bad metadata, empty
    transcript), LockContention, StorePathError or OSError (disk)."""
    meta.validate()
    if not raw:
        raise InputError("refusing to stage an empty transcript")
    lane.ensure(STAGING)
    fd, tmp = temp_file(lane.staging)
    try:
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        return stage_file(lane, tmp, len(raw), meta, config=config, now_ns=now_ns,
                          source_path=source_path, repo_root=repo_root, unsettled=unsettled)
    finally:
        _unlink_quietly(tmp)


def _same_bytes(path, tmp: str, size: int, prior_size: int) -> bool:
    if size != prior_size:
        return False
    try:
        with open(path, "rb", buffering=1 << 20) as a, open(tmp, "rb", buffering=1 << 20) as b:
            return same_prefix(a, b, size) and not a.read(1)
    except OSError:
        return False


def stage_file(
    lane: Lane,
    tmp: str,
    size: int,
    meta: CaptureMeta,
    *,
    config: Config,
    now_ns: int,
    source_path: str = "",
    repo_root: str = "",
    unsettled: bool = False,
) -> StageResult:
    """Stage the durable (fsynced) temp file ``tmp`` of ``size`` bytes, which must lie
    in ``lane.staging``: it is renamed into place (or left for the caller to remove,
    when the prior copy holds the same bytes). Compares with a prior copy block by
    block, never loading either, so a transcript of any size stages in bounded memory.
    Raises as :func:`stage`."""
    meta.validate()
    if size <= 0:
        raise InputError("refusing to stage an empty transcript")
    for text in (source_path, repo_root):
        if "\n" in text or "\r" in text:
            raise InputError("a source path carrying a line break is refused")
    lane.ensure(STAGING)
    key = meta.agent_id or meta.session_id
    with key_lock(lane, key, config):
        names = os.listdir(lane.staging)  # one listing serves both searches below
        _drop_orphan_sidecars(lane, names, key)
        prior, prior_sidecar = _prior(lane, names, meta, key, now_ns, config)
        if prior is not None:
            same = _same_bytes(prior.path, tmp, size, prior.bytes)
            if same and not (meta.lineage_source == HOOK and prior.lineage_source != HOOK):
                return StageResult(entry=prior, wrote=False)
            name = prior.name
            if prior_sidecar is not None:
                meta = prefer_hook(meta, prior_sidecar.meta())
        else:
            name = f"{compact_stamp(now_ns)}-{key}{RAW_SUFFIX}"
        sidecar = make_sidecar(meta, staged_ns=now_ns, source_path=source_path,
                               repo_root=repo_root, unsettled=unsettled)
        raw_path = lane.staging / name
        sidecar_path = lane.staging / (stem_of(name) + SIDECAR_SUFFIX)
        # Both files are on disk before either is renamed into place, sidecar first:
        # a failed write leaves the previous copy and its own sidecar untouched.
        try:
            atomic_write_all([(sidecar_path, encode_json(sidecar))], sync_dir=False)
            refuse_symlink_leaf(raw_path)
            os.replace(tmp, raw_path)
            fsync_dir(lane.staging)
        except BaseException:
            if prior is None and not os.path.lexists(raw_path):
                _unlink_quietly(sidecar_path)  # renamed in, then its .raw failed
            raise
        entry = entry_for(lane, name, sidecar, size, now_ns=now_ns, ttl_s=config.staged_ttl_s)
    return StageResult(
        entry=entry,
        wrote=True,
        replaced=prior is not None,
        replaced_bytes=prior.bytes if prior is not None else 0,
    )
