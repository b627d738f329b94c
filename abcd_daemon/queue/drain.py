"""Executing a drain: one staged entry at a time, through capture.

Per entry (reference §4.3-4.4, DESIGN §3.3):
1. re-describe it (the sidecar is read at drain time, not plan time);
2. open the staged file (guarded); nothing is read into memory whole — capture
   streams it (``store.capture.capture_file``), so a transcript of any size under the
   configured caps drains in bounded memory;
3. if the recorded source still exists, is strictly longer, and starts with the staged
   bytes (compared block by block), capture its first ``size`` bytes instead (counted
   as ``extended``: the hook fired before the harness flushed the transcript's end);
4. capture; a permanent refusal quarantines the entry with the reason, any other
   failure leaves it staged (retryable);
5. on success remove the staged file and its sidecar — only if it still holds exactly
   the file read (a re-stage mid-drain is left for the next pass).
Nothing is ever deleted by age. ``drain_entry`` does blocking I/O and CPU work and
never awaits; the daemon runs it in a worker thread, the CLI calls :func:`drain_pass`.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from ..config import Config, DrainBudget
from ..errors import AbcdError, PermanentError
from ..fsio.atomic import fsync_dir
from ..fsio.guarded import open_guarded
from ..store.capture import capture_file
from ..store.chunks import same_prefix
from ..store.lane import Lane
from ..store.meta import CaptureMeta
from .plan import plan_pass
from .quarantine import StagedCopyReplaced, file_identity, quarantine, still_holds
from .sidecar import SIDECAR_SUFFIX, stem_of
from .stage import key_lock
from .results import DrainFailure, DrainResult, EntryOutcome
from .staged import StagedEntry, describe, list_staged


def _failure(entry: StagedEntry, error: str, **kw) -> EntryOutcome:
    status = "quarantined" if kw.get("quarantined") else "failed"
    return EntryOutcome(
        status=status,
        failure=DrainFailure(root_sha=entry.root_sha, name=entry.name, path=entry.path,
                             session_id=entry.session_id, agent_id=entry.agent_id,
                             error=error, **kw),
    )


def broken_outcome(entry: StagedEntry) -> EntryOutcome:
    """The failure reported, every pass, for an entry that cannot be drained."""
    return _failure(entry, entry.error)


def _source_extension(sidecar, staged_path, staged_len: int, config: Config) -> int | None:
    """The length of the recorded source when it is strictly longer than the staged
    copy and starts with it (block by block), else None. Never raises."""
    if sidecar is None or not sidecar.source_path:
        return None
    try:
        fd, size = open_guarded(sidecar.source_path, config.max_transcript_bytes,
                                what="source transcript", owner=os.geteuid())
    except (AbcdError, OSError):  # as intake: never another user's file; over the cap
        return None
    try:
        if size <= staged_len:
            return None  # not longer: nothing to read
        with os.fdopen(fd, "rb", buffering=1 << 20) as source, \
                open(staged_path, "rb", buffering=1 << 20) as staged:
            fd = -1
            return size if same_prefix(source, staged, staged_len) else None
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _remove_staged(lane: Lane, entry: StagedEntry, identity, config: Config) -> bool:
    """Remove the staged copy if it is still the file that was read. True if removed."""
    with key_lock(lane, entry.key, config):
        if not still_holds(entry.path, identity):
            return False
        os.unlink(entry.path)
        try:
            os.unlink(lane.staging / (stem_of(entry.name) + SIDECAR_SUFFIX))
        except FileNotFoundError:
            pass
        fsync_dir(lane.staging)
    return True


def drain_entry(lane: Lane, name: str, *, scanners, config: Config, now_ns: int,
                clock: Callable[[], float] = time.monotonic) -> EntryOutcome:
    """Drain one staged entry by name. Never raises for a problem with the entry; the
    outcome says what happened."""
    entry, sidecar = describe(lane, name, now_ns=now_ns, ttl_s=config.staged_ttl_s)
    if entry.error == "the staged file vanished while it was listed":
        return EntryOutcome(status="gone")
    if entry.error:
        return broken_outcome(entry)
    identity = file_identity(entry.path)
    try:
        fd, staged_len = open_guarded(entry.path, config.max_transcript_bytes,
                                      what="staged transcript", allow_empty=False)
        os.close(fd)
    except AbcdError as exc:
        if getattr(exc, "reason", "") == "missing":
            return EntryOutcome(status="gone")
        if getattr(exc, "reason", "") == "too-big":
            return _failure(entry, f"{exc}; it stays staged — raise max_transcript_bytes "
                            "in config.toml to store it")
        return _failure(entry, f"cannot read staged transcript: {exc}")
    longer = _source_extension(sidecar, entry.path, staged_len, config)
    meta = sidecar.meta() if sidecar is not None else CaptureMeta(session_id=entry.session_id)
    repo_root = sidecar.repo_root if sidecar is not None else ""
    try:
        if longer is not None:
            result = capture_file(lane, sidecar.source_path, meta, scanner=scanners.get(repo_root),
                                  config=config, now_ns=now_ns, clock=clock, length=longer,
                                  what="source transcript", owner=os.geteuid())
        else:
            result = capture_file(lane, entry.path, meta, scanner=scanners.get(repo_root),
                                  config=config, now_ns=now_ns, clock=clock)
    except PermanentError as exc:
        try:
            qpath = quarantine(lane, entry, identity, str(exc), config=config, now_ns=now_ns)
        except StagedCopyReplaced as replaced:
            return _failure(entry, f"{exc}; {replaced}", permanent=True)
        except (AbcdError, OSError) as move:
            return _failure(entry, f"{exc}; could not quarantine the raw copy ({move}), "
                            "so it stays staged", permanent=True)
        return _failure(entry, str(exc), permanent=True, quarantined=True, quarantine_path=qpath)
    except (AbcdError, OSError) as exc:
        return _failure(entry, str(exc))
    try:
        _remove_staged(lane, entry, identity, config)
    except (AbcdError, OSError) as exc:
        return _failure(entry, f"captured but could not remove staged copy: {exc}")
    return EntryOutcome(
        status="stored" if result.wrote else "already-stored",
        record=result.record,
        superseded=result.superseded,
        extended=longer is not None,
        bytes=longer if longer is not None else staged_len,
    )


def drain_pass(lanes: list[Lane], budget: DrainBudget, *, scanners, config: Config,
               now_ns: Callable[[], int] = time.time_ns,
               clock: Callable[[], float] = time.monotonic,
               progress: Callable[[int, int, int, int], None] | None = None) -> DrainResult:
    """Plan and run one synchronous pass over ``lanes`` (the CLI's and ingest's drain).
    ``progress(done, total, bytes_done, bytes_total)`` is called before the first entry
    and after each one. Never raises for an entry: its failure is in the result."""
    start = now_ns()
    entries = [e for lane in lanes for e in list_staged(lane, now_ns=start, ttl_s=config.staged_ttl_s)]
    plan = plan_pass(entries, budget)
    result = DrainResult(remaining=plan.remaining, overdue=plan.overdue)
    for entry in plan.broken:
        result.failed.append(broken_outcome(entry).failure)  # type: ignore[arg-type]
    by_sha = {lane.root_sha: lane for lane in lanes}
    done_bytes = 0
    if progress:
        progress(0, len(plan.take), 0, plan.take_bytes)
    for i, entry in enumerate(plan.take, 1):
        outcome = drain_entry(by_sha[entry.root_sha], entry.name, scanners=scanners,
                              config=config, now_ns=now_ns(), clock=clock)
        if outcome.status != "gone":
            result.add(outcome)
        done_bytes += entry.bytes
        if progress:
            progress(i, len(plan.take), done_bytes, plan.take_bytes)
    return result
