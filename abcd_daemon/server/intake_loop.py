"""The intake loop: spooled payloads → staged transcripts, one at a time, in arrival
order (a session's notes are written before its later payloads are resolved).

Woken by the doorbell (every connection), by the spool watcher, and by a periodic
sweep. A payload that hits a transient fault is retried after a back-off; one that is
unusable is already in ``spool/failed`` with its reason (:mod:`abcd_daemon.intake.take`).
An unexpected exception is logged and retried — it never stops the loop."""

from __future__ import annotations

import logging
import os
import time

import trio

from ..intake.spool import list_spool, spool_dirs
from ..intake.take import IntakeOutcome, take
from ..shim import LIVE_EVENTS

log = logging.getLogger("abcd.daemon")


async def intake_loop(daemon) -> None:
    dirs = spool_dirs(daemon.home, daemon.spool_extra)
    while not daemon.stopping.is_set():
        daemon.intake_wake = trio.Event()
        paths = await trio.to_thread.run_sync(list_spool, dirs, limiter=daemon.io_limiter)
        now = trio.current_time()
        taken = 0
        for path in paths:
            if daemon.stopping.is_set():
                return
            if daemon.retry_after.get(path, 0) > now:
                continue
            outcome = await trio.to_thread.run_sync(_take, daemon, path, limiter=daemon.io_limiter)
            taken += 1
            _log_intake(outcome)
            if outcome.status == "retry":
                daemon.retry_after[path] = trio.current_time() + min(daemon.config.sweep_interval_s, 5.0)
            else:
                daemon.retry_after.pop(path, None)
                daemon.stats.intake_total += 1
            if outcome.status in ("staged", "restaged"):
                daemon.drain_wake.set()
            if outcome.event in (*LIVE_EVENTS, "session-start") and outcome.transcript_path:
                daemon.follower.hint(outcome.event, outcome.transcript_path)
        daemon.intake_swept.set()
        if taken:
            await trio.to_thread.run_sync(daemon.write_status, limiter=daemon.io_limiter)
        with trio.move_on_after(daemon.config.sweep_interval_s):
            await daemon.intake_wake.wait()

def _take(daemon, path: str):
    try:
        return take(daemon.home, path, resolver=daemon.resolver, config=daemon.config,
                    now_ns=time.time_ns())
    except Exception as exc:  # noqa: BLE001 - a bug must not stop intake; retried later
        log.exception("intake failed unexpectedly on %s", path)
        return IntakeOutcome(name=os.path.basename(path), status="retry",
                             message=f"unexpected {type(exc).__name__}: {exc}")

def _log_intake(outcome) -> None:
    who = outcome.session_id + (f" agent {outcome.agent_id}" if outcome.agent_id else "")
    if outcome.status == "live":
        return  # one per response and per prompt: the follow task logs what it starts
    level = logging.WARNING if outcome.status in ("failed", "retry") else logging.INFO
    via = f" (repository resolved via {outcome.via})" if outcome.via else ""
    log.log(level, "intake %s %s %s%s%s", outcome.status, outcome.event, who, via,
            f": {outcome.message}" if outcome.message else "")
    for warning in outcome.warnings:
        log.warning("intake %s: %s", who, warning)


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
