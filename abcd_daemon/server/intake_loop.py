"""The intake loop: spooled payloads → staged transcripts, one at a time, in arrival
order (a session's notes are written before its later payloads are resolved).

Woken by the doorbell (every connection), by the spool watcher, and by a periodic
sweep. A payload that hits a transient fault is retried after a back-off; one that is
unusable is already in ``spool/failed`` with its reason (:mod:`abcd_daemon.intake.take`).
An unexpected exception is logged and retried — it never stops the loop. Log lines
name the spool file, the event and the outcome; the payload's values never (its
messages are already scrubbed by intake, :mod:`abcd_daemon.intake.reasons`)."""

from __future__ import annotations

import logging
import os
import time

import trio

from ..intake.take import IntakeOutcome, take
from .logs import log_unexpected
from ..shim import LIVE_EVENTS

log = logging.getLogger("abcd.daemon")


async def intake_loop(daemon) -> None:
    while not daemon.stopping.is_set():
        daemon.intake_wake = trio.Event()
        refused = daemon.stats.refused_spools
        listing = await trio.to_thread.run_sync(daemon.list_spool, limiter=daemon.io_limiter)
        paths = listing.paths
        now = trio.current_time()
        taken = 0
        for path in paths:
            if daemon.stopping.is_set():
                return
            if daemon.retry_after.get(path, 0) > now:
                continue
            outcome = await trio.to_thread.run_sync(take_now, daemon, path, limiter=daemon.io_limiter)
            taken += 1
            if outcome.status == "retry":
                daemon.retry_after[path] = trio.current_time() + min(daemon.config.sweep_interval_s, 5.0)
            else:
                daemon.retry_after.pop(path, None)
            if outcome.status in ("staged", "restaged"):
                daemon.drain_wake.set()
            if outcome.event in (*LIVE_EVENTS, "session-start") and outcome.transcript_path:
                daemon.follower.hint(outcome.event, outcome.transcript_path)
        daemon.intake_swept.set()
        if taken or listing.refused != refused:
            await trio.to_thread.run_sync(daemon.write_status, limiter=daemon.io_limiter)
        with trio.move_on_after(daemon.config.sweep_interval_s):
            await daemon.intake_wake.wait()

def take_now(daemon, path: str) -> IntakeOutcome:
    """Take one spooled payload (worker thread), serialised with every other taker
    (the loop, ``abcd history retry``), then log and count it. Never raises."""
    with daemon.intake_lock:
        try:
            outcome = take(daemon.home, path, resolver=daemon.resolver, config=daemon.config,
                           now_ns=time.time_ns())
        except Exception as exc:  # noqa: BLE001 - a bug must not stop intake; retried later
            summary = log_unexpected(log, f"intake of {os.path.basename(path)}", exc)
            outcome = IntakeOutcome(name=os.path.basename(path), status="retry", message=summary)
    _log_intake(outcome)
    if outcome.status == "dropped":
        daemon.stats.events_dropped += 1
    if outcome.status not in ("retry", "gone"):
        daemon.stats.intake_total += 1
    return outcome


def _log_intake(outcome) -> None:
    if outcome.status in ("gone", "live"):
        return  # live: one per response and per prompt; the follow task logs what it starts
    level = logging.WARNING if outcome.status in ("failed", "retry", "dropped") else logging.INFO
    what = [outcome.event] if outcome.event else []
    if outcome.root_sha:
        what.append(f"lane {outcome.root_sha[:12]}")
    if outcome.bytes:
        what.append(f"{outcome.bytes} bytes")
    if outcome.via:
        what.append(f"repository resolved via {outcome.via}")
    log.log(level, "intake %s %s%s%s", outcome.status, outcome.name,
            f" ({', '.join(what)})" if what else "",
            f": {outcome.message}" if outcome.message else "")
    for warning in outcome.warnings:
        log.warning("intake %s: %s", outcome.name, warning)


async def spool_watch(daemon) -> None:
    import anyio
    import watchfiles

    stop_event = anyio.Event()

    async def stop_when_stopping():
        await daemon.stopping.wait()
        stop_event.set()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(stop_when_stopping)
            # The doorbell is the fast path; this watcher is the backstop for a shim
            # that could not ring, so it may poll slowly: ``step`` is how often the
            # watcher thread wakes (idle CPU) and how fast it notices stop_event.
            async for _ in watchfiles.awatch(str(daemon.home.spool_new), stop_event=stop_event,
                                             debounce=250, step=250, rust_timeout=10_000):
                daemon.ring()
            nursery.cancel_scope.cancel()
    except Exception as exc:  # noqa: BLE001 - the doorbell and the sweep still work
        log.warning("spool watcher stopped (%s); the doorbell and the periodic sweep remain", exc)
