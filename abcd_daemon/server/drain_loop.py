"""The drain loop: budgeted passes over every lane, staged → records / quarantine.

A pass is planned across all lanes (overdue first, main threads before sub-agents,
oldest first; :mod:`abcd_daemon.queue.plan`) and executed one entry at a time in a
worker thread behind the redaction limiter, so the socket stays responsive. Passes
repeat while there is work, then wait for intake or the timer. An entry whose capture
failed retryably is not planned again until the drain interval has passed, so a
failing entry cannot monopolise passes; an unexpected exception fails one entry, never
the loop. After a pass that stored at least
:data:`~.memory.TRIM_AFTER_BYTES`, the memory it used is handed back
(:func:`~.memory.release_after`). Log lines name the staged entry (``abcd history staged`` lists it by that
name) and the outcome; an unexpected error is logged without its message, which could
quote the unredacted bytes (:func:`.logs.log_unexpected`)."""

from __future__ import annotations

import logging
import time

import trio

from ..queue.drain import DrainFailure, EntryOutcome, drain_entry
from ..queue.plan import plan_pass
from ..queue.staged import list_staged
from ..status import PassSummary
from ..store.lane import Lane, list_lanes
from ..store.record import format_rfc3339_ns
from .logs import log_unexpected
from .memory import TRIM_AFTER_BYTES, release_after

log = logging.getLogger("abcd.daemon")


async def drain_loop(daemon) -> None:
    # The search index is repaired at start (a crash between a record write and its
    # rows: every record file looked at), then kept level after every pass that stored
    # something (the files that pass stored and superseded only).
    await trio.to_thread.run_sync(index_sync, daemon, limiter=daemon.io_limiter)
    # That repair may have read every record: its garbage is not the idle daemon's.
    await trio.to_thread.run_sync(release_after, TRIM_AFTER_BYTES, limiter=daemon.io_limiter)
    while not daemon.stopping.is_set():
        daemon.drain_wake = trio.Event()
        while not daemon.stopping.is_set():
            more = await _drain_pass(daemon)
            if not more:
                break
        with trio.move_on_after(daemon.config.drain_interval_s):
            await daemon.drain_wake.wait()

def index_sync(daemon, changed: bool = False) -> None:
    """Bring the search index level with every lane's records (the start-up repair),
    or, when ``changed``, with every lane whose records changed since it was last
    level (after a request that may have stored or removed records). A new store has
    no index until its first record. The index is derived data: a failure here is
    logged and never stops the drain; the next sync (or any ``abcd search``) repairs it."""
    _derive(_level, daemon, changed)


def _level(daemon, changed: bool) -> None:
    import os

    from ..index.db import index_path

    if not os.path.exists(index_path(daemon.home)) and not _any_records(daemon.home):
        return  # a new store: the index is created with its first record, not before
    if changed:
        daemon.index.refresh()
    else:
        daemon.index.sync()


def index_update(daemon, stored: dict[str, set[str]]) -> None:
    """Bring the record files a drain pass stored and superseded (root → file names)
    level, a ``stat`` each; a failure is logged, as :func:`index_sync`'s."""
    _derive(daemon.index.update, stored)


def _derive(work, *args) -> None:
    try:
        work(*args)
    except Exception as exc:  # noqa: BLE001 - derived data must not stop the drain
        log_unexpected(log, "index update", exc)


def _any_records(home) -> bool:
    import os

    for lane in list_lanes(home):
        try:
            with os.scandir(lane.records) as it:
                if any(e.name.endswith(".md") for e in it):
                    return True
        except OSError:
            continue
    return False


def _plan(daemon, now_trio: float):
    now = time.time_ns()
    entries = [e for lane in list_lanes(daemon.home)
               for e in list_staged(lane, now_ns=now, ttl_s=daemon.config.staged_ttl_s)]
    ready = [e for e in entries if daemon.retry_after.get(e.path, 0) <= now_trio]
    return plan_pass(ready, daemon.config.drain_budget)


def _drain_one(daemon, entry):
    try:
        with daemon.drain_lock:
            return drain_entry(Lane(daemon.home, entry.root_sha), entry.name,
                               scanners=daemon.scanners, config=daemon.config,
                               now_ns=time.time_ns())
    except Exception as exc:  # noqa: BLE001 - a bug must not stop the drain; retried later
        summary = log_unexpected(log, f"drain of {entry.name}", exc)
        return EntryOutcome(status="failed", failure=DrainFailure(
            root_sha=entry.root_sha, name=entry.name, path=entry.path,
            session_id=entry.session_id, agent_id=entry.agent_id, error=summary))


async def _drain_pass(daemon) -> bool:
    """One pass. Returns True when a further pass has work right away."""
    plan = await trio.to_thread.run_sync(_plan, daemon, trio.current_time(),
                                         limiter=daemon.io_limiter)
    if not plan.take:
        return False
    started = time.monotonic()
    summary = PassSummary(remaining=plan.remaining)
    touched: dict[str, set[str]] = {}  # root → the record files stored and superseded
    stored_bytes = 0
    for entry in plan.take:
        if daemon.stopping.is_set():
            break
        outcome = await trio.to_thread.run_sync(_drain_one, daemon, entry,
                                                limiter=daemon.redaction_limiter,
                                                abandon_on_cancel=True)
        who = f"{entry.root_sha[:12]}/{entry.name}"
        if outcome.status == "stored":
            touched.setdefault(entry.root_sha, set()).update([outcome.record.name, *outcome.superseded])
            summary.stored += 1
            daemon.stats.stored_total += 1
            stored_bytes += outcome.bytes
            log.info("stored %s (%d bytes)", who, outcome.bytes)
        elif outcome.status == "already-stored":
            summary.already_stored += 1
        elif outcome.failure is not None:
            summary.failed += 1
            summary.quarantined += int(outcome.failure.quarantined)
            if not outcome.failure.quarantined:
                daemon.retry_after[entry.path] = trio.current_time() + daemon.config.drain_interval_s
            log.warning("could not store %s: %s", who, outcome.failure.error)
            daemon.stats.last_error = outcome.failure.error
        summary.extended += int(outcome.extended)
    summary.seconds = round(time.monotonic() - started, 3)
    summary.finished_at = format_rfc3339_ns(time.time_ns())
    daemon.stats.passes += 1
    daemon.stats.last_pass = summary
    if touched:
        await trio.to_thread.run_sync(index_update, daemon, touched, limiter=daemon.io_limiter)
    if summary.stored or summary.quarantined:
        daemon.follower.changed()  # the missing summary counts stored transcripts
    await trio.to_thread.run_sync(daemon.write_status, limiter=daemon.io_limiter)
    # A large capture (and the index sync that read its record) leaves its garbage in
    # the allocator's arenas: give it back, as after a large reply (server/memory.py).
    await trio.to_thread.run_sync(release_after, stored_bytes, limiter=daemon.io_limiter)
    return plan.remaining > 0 or summary.stored + summary.already_stored > 0
