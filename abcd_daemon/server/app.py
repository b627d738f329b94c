"""The abcd daemon: one trio nursery tree per user.

::

    run_daemon()                          instance lock held for the whole life
    └── root nursery
        ├── serve            accept loop on the Unix socket (bound or inherited)
        │   └── connection   one task per client: peer uid check, handshake, replies
        ├── intake_loop      spool/new → stage, one payload at a time, arrival order
        ├── spool_watch      watchfiles on spool/new (stop_event) → rings intake
        ├── drain_loop       budgeted passes over every lane → records / quarantine
        ├── root_watch       configured harness roots → stage settled transcripts (off
        │                    unless config.watch_roots)
        ├── watchdog         WATCHDOG=1 pings when systemd asks for them
        └── signals          SIGTERM/SIGINT: stop accepting, finish the current item
                             within the grace period, exit 0; a second signal exits now

Wake-ups, never busy loops: intake is rung by every connection (the shim's doorbell),
by the spool watcher and by a periodic sweep; the drain is rung by intake and by a
timer. Blocking work (reading, staging, redaction) runs in worker threads: intake and
requests on their own limiters, redaction behind ``redaction_limiter``, so the socket
answers during a large drain. Commit steps live in the synchronous core and contain no
``await``; cancellation falls between items.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

import trio

from .. import __version__
from ..config import Config
from ..fsio.atomic import atomic_write, sweep_temp_files
from ..fsio.dirs import ensure_chain
from ..intake.resolve import LaneResolver
from ..intake.spool import count_failed, list_spool, spool_dirs
from ..intake.take import IntakeOutcome, take
from ..paths import Home, lock_path, socket_path
from ..queue.drain import DrainFailure, EntryOutcome, drain_entry
from ..queue.plan import plan_pass
from ..queue.scanners import ScannerPool
from ..queue.staged import list_staged
from ..queue.survey import survey_backlog
from ..shim import fallback_spools
from ..status import DaemonStatus, PassSummary, summarise
from ..store.lane import list_lanes
from ..store.record import format_rfc3339_ns
from ..wire import messages as m
from .connection import serve_connection
from .handlers import Handlers, error_reply
from .instance import acquire_instance_lock, bind_socket, inherited_socket
from .notify import notify, watchdog_interval

log = logging.getLogger("abcd.daemon")


class Daemon:
    """State shared by the daemon's tasks. Created and run by :func:`run_daemon`."""

    def __init__(self, home: Home, config: Config, *, env=None) -> None:
        self.home = home
        self.config = config
        self.env = os.environ if env is None else env
        self.started_ns = time.time_ns()
        self.started_mono = time.monotonic()
        self.scanners = ScannerPool(config)
        self.resolver = LaneResolver(home, config)
        self.drain_lock = threading.Lock()
        self.redaction_limiter = trio.CapacityLimiter(config.redaction_workers)
        self.io_limiter = trio.CapacityLimiter(4)
        self.intake_wake = trio.Event()
        self.drain_wake = trio.Event()
        self.stopping = trio.Event()
        self.stats = DaemonStatus(version=__version__, pid=os.getpid(),
                                  started_at=format_rfc3339_ns(self.started_ns),
                                  home=str(home.root))
        self.retry_after: dict[str, float] = {}
        self.handlers = Handlers(home, config, self.scanners, drain_lock=self.drain_lock,
                                 status=self.snapshot)
        self.spool_extra = fallback_spools(self.env)

    # -- wake-ups ----------------------------------------------------------------
    def ring(self) -> None:
        self.intake_wake.set()

    # -- status ------------------------------------------------------------------
    def snapshot(self) -> DaemonStatus:
        """A fresh status (surveys the lanes; call from a worker thread)."""
        now = time.time_ns()
        status = summarise(self.stats, survey_backlog(self.home, now_ns=now, ttl_s=self.config.staged_ttl_s))
        status.updated_at = format_rfc3339_ns(now)
        status.uptime_s = round(time.monotonic() - self.started_mono, 3)
        status.spool_pending = len(list_spool(spool_dirs(self.home, self.spool_extra)))
        status.spool_failed = count_failed(self.home)
        return status

    def write_status(self) -> None:
        """Rewrite ``status.json`` atomically (read by the session-start shim)."""
        import msgspec

        status = self.snapshot()
        try:
            atomic_write(self.home.status_file, msgspec.json.encode(status) + b"\n")
        except OSError as exc:
            log.warning("could not write %s: %s", self.home.status_file, exc)

    # -- requests ----------------------------------------------------------------
    async def answer(self, stream, request, send) -> None:
        if isinstance(request, m.IngestRequest):
            await self._answer_ingest(stream, request, send)
            return
        if isinstance(request, m.DrainRequest):
            limiter = self.redaction_limiter
        else:
            limiter = self.io_limiter
        reply, body = await trio.to_thread.run_sync(self.handlers.handle, request, limiter=limiter,
                                                    abandon_on_cancel=True)
        await send(stream, reply)
        if isinstance(reply, (m.ShowReply, m.ReconstructReply)):
            for start in range(0, len(body), m.CHUNK):
                await send(stream, m.Chunk(data=body[start : start + m.CHUNK]))
            await send(stream, m.End())
        if isinstance(request, (m.DrainRequest, m.DiscardRequest)):
            await trio.to_thread.run_sync(self.write_status, limiter=self.io_limiter)

    async def _answer_ingest(self, stream, request, send) -> None:
        send_channel, receive_channel = trio.open_memory_channel(64)
        token = trio.lowlevel.current_trio_token()
        last = [0.0]

        def progress(files_done, files_total, bytes_done, bytes_total):
            now = time.monotonic()
            if now - last[0] < 0.2 and files_done < files_total:
                return
            last[0] = now
            message = m.Progress(files_done=files_done, files_total=files_total,
                                 bytes_done=bytes_done, bytes_total=bytes_total)
            try:
                trio.from_thread.run_sync(send_channel.send_nowait, message, trio_token=token)
            except (trio.WouldBlock, trio.RunFinishedError):
                pass

        async def run():
            try:
                reply, _ = await trio.to_thread.run_sync(self.handlers.handle, request, progress,
                                                         limiter=self.redaction_limiter)
            finally:
                pass
            await send_channel.send(reply)
            await send_channel.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            async with receive_channel:
                async for message in receive_channel:
                    await send(stream, message)
        self.drain_wake.set()

    # -- loops -------------------------------------------------------------------
    async def serve(self, listener: trio.SocketListener, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            task_status.started()
            while not self.stopping.is_set():
                try:
                    stream = await listener.accept()
                except (trio.ClosedResourceError, OSError) as exc:
                    if self.stopping.is_set():
                        return
                    log.warning("accept failed: %s", exc)
                    await trio.sleep(0.1)
                    continue
                nursery.start_soon(serve_connection, stream, self)

    async def intake_loop(self) -> None:
        dirs = spool_dirs(self.home, self.spool_extra)
        while not self.stopping.is_set():
            self.intake_wake = trio.Event()
            paths = await trio.to_thread.run_sync(list_spool, dirs, limiter=self.io_limiter)
            now = time.monotonic()
            taken = 0
            for path in paths:
                if self.stopping.is_set():
                    return
                if self.retry_after.get(path, 0) > now:
                    continue
                outcome = await trio.to_thread.run_sync(self._take, path, limiter=self.io_limiter)
                taken += 1
                self._log_intake(outcome)
                if outcome.status == "retry":
                    self.retry_after[path] = time.monotonic() + min(self.config.sweep_interval_s, 5.0)
                else:
                    self.retry_after.pop(path, None)
                    self.stats.intake_total += 1
                if outcome.status in ("staged", "restaged"):
                    self.drain_wake.set()
            if taken:
                await trio.to_thread.run_sync(self.write_status, limiter=self.io_limiter)
            with trio.move_on_after(self.config.sweep_interval_s):
                await self.intake_wake.wait()

    def _take(self, path: str):
        try:
            return take(self.home, path, resolver=self.resolver, config=self.config,
                        now_ns=time.time_ns())
        except Exception as exc:  # noqa: BLE001 - a bug must not stop intake; retried later
            log.exception("intake failed unexpectedly on %s", path)
            return IntakeOutcome(name=os.path.basename(path), status="retry",
                                 message=f"unexpected {type(exc).__name__}: {exc}")

    def _log_intake(self, outcome) -> None:
        who = outcome.session_id + (f" agent {outcome.agent_id}" if outcome.agent_id else "")
        level = logging.WARNING if outcome.status in ("failed", "retry") else logging.INFO
        log.log(level, "intake %s %s %s%s", outcome.status, outcome.event, who,
                f": {outcome.message}" if outcome.message else "")
        for warning in outcome.warnings:
            log.warning("intake %s: %s", who, warning)

    async def spool_watch(self) -> None:
        import anyio
        import watchfiles

        stop_event = anyio.Event()

        async def stop_when_stopping():
            await self.stopping.wait()
            stop_event.set()

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(stop_when_stopping)
                # The doorbell is the fast path; this watcher is the backstop for a shim
                # that could not ring, so it may poll slowly: ``step`` is how often the
                # watcher thread wakes (idle CPU) and how fast it notices stop_event.
                async for _ in watchfiles.awatch(str(self.home.spool_new), stop_event=stop_event,
                                                 debounce=250, step=250, rust_timeout=10_000):
                    self.ring()
                nursery.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - the doorbell and the sweep still work
            log.warning("spool watcher stopped (%s); the doorbell and the periodic sweep remain", exc)

    async def drain_loop(self) -> None:
        while not self.stopping.is_set():
            self.drain_wake = trio.Event()
            while not self.stopping.is_set():
                more = await self._drain_pass()
                if not more:
                    break
            with trio.move_on_after(self.config.drain_interval_s):
                await self.drain_wake.wait()

    def _plan(self):
        now = time.time_ns()
        entries = [e for lane in list_lanes(self.home)
                   for e in list_staged(lane, now_ns=now, ttl_s=self.config.staged_ttl_s)]
        mono = time.monotonic()
        ready = [e for e in entries if self.retry_after.get(e.path, 0) <= mono]
        return plan_pass(ready, self.config.drain_budget)

    def _drain_one(self, entry):
        from ..store.lane import Lane

        try:
            with self.drain_lock:
                return drain_entry(Lane(self.home, entry.root_sha), entry.name,
                                   scanners=self.scanners, config=self.config,
                                   now_ns=time.time_ns())
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the drain; retried later
            log.exception("drain failed unexpectedly on %s", entry.name)
            return EntryOutcome(status="failed", failure=DrainFailure(
                root_sha=entry.root_sha, name=entry.name, path=entry.path,
                session_id=entry.session_id, agent_id=entry.agent_id,
                error=f"unexpected {type(exc).__name__}: {exc}"))

    async def _drain_pass(self) -> bool:
        """One pass. Returns True when a further pass has work right away."""
        plan = await trio.to_thread.run_sync(self._plan, limiter=self.io_limiter)
        if not plan.take:
            return False
        started = time.monotonic()
        summary = PassSummary(remaining=plan.remaining)
        for entry in plan.take:
            if self.stopping.is_set():
                break
            outcome = await trio.to_thread.run_sync(self._drain_one, entry,
                                                    limiter=self.redaction_limiter,
                                                    abandon_on_cancel=True)
            who = entry.session_id + (f" agent {entry.agent_id}" if entry.agent_id else "")
            if outcome.status == "stored":
                summary.stored += 1
                self.stats.stored_total += 1
                log.info("stored %s (%d bytes)", who, outcome.bytes)
            elif outcome.status == "already-stored":
                summary.already_stored += 1
            elif outcome.failure is not None:
                summary.failed += 1
                summary.quarantined += int(outcome.failure.quarantined)
                if not outcome.failure.quarantined:
                    self.retry_after[entry.path] = time.monotonic() + self.config.drain_interval_s
                log.warning("could not store %s: %s", who, outcome.failure.error)
                self.stats.last_error = outcome.failure.error
            summary.extended += int(outcome.extended)
        summary.seconds = round(time.monotonic() - started, 3)
        summary.finished_at = format_rfc3339_ns(time.time_ns())
        self.stats.passes += 1
        self.stats.last_pass = summary
        await trio.to_thread.run_sync(self.write_status, limiter=self.io_limiter)
        return plan.remaining > 0 or summary.stored + summary.already_stored > 0

    async def root_watch(self) -> None:
        from ..ingest.watch import run_watch_roots

        await run_watch_roots(self)

    async def watchdog(self, interval: float) -> None:
        while True:
            notify("WATCHDOG=1", self.env)
            await trio.sleep(interval)

    async def signals(self, cancel_scope: trio.CancelScope, listener) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
            async for signum in received:
                if self.stopping.is_set():
                    log.warning("second signal; exiting now")
                    os._exit(0)
                log.info("signal %s: stopping (grace %.0fs)", signal.Signals(signum).name,
                         self.config.shutdown_grace_s)
                notify("STOPPING=1", self.env)
                self.stopping.set()
                self.intake_wake.set()
                self.drain_wake.set()
                await listener.aclose()
                cancel_scope.deadline = trio.current_time() + self.config.shutdown_grace_s


def sweep_leftovers(home: Home) -> int:
    """Remove temp files a killed writer left (we hold the instance lock, so no writer of
    ours is running). Spool temp files older than a minute are a shim killed before its
    rename: that payload was never acknowledged."""
    removed = 0
    for lane in list_lanes(home):
        for directory in (lane.records, lane.staging, lane.quarantine, lane.path):
            removed += sweep_temp_files(directory)
    for directory in (home.root, home.spool_failed):
        removed += sweep_temp_files(directory)
    cutoff = time.time() - 60
    try:
        for name in os.listdir(home.spool_tmp):
            path = home.spool_tmp / name
            try:
                if os.lstat(path).st_mtime < cutoff:
                    os.unlink(path)
                    removed += 1
            except OSError:
                pass
    except OSError:
        pass
    return removed


async def run_daemon(home: Home, config: Config, *, env=None, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Run the daemon until a signal stops it. Raises AlreadyRunning / StorePathError
    before listening; after that it only returns."""
    env = os.environ if env is None else env
    lock_fd = acquire_instance_lock(lock_path(env))
    daemon = None
    try:
        ensure_chain(home.root, "spool", "new")
        ensure_chain(home.root, "spool", "tmp")
        swept = sweep_leftovers(home)
        if swept:
            log.info("removed %d leftover temp file(s) from an interrupted run", swept)
        inherited = inherited_socket(env)
        sock = inherited if inherited is not None else bind_socket(socket_path(env))
        daemon = Daemon(home, config, env=env)
        daemon.stats.socket = socket_path(env)
        daemon.stats.socket_activated = inherited is not None
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(sock))
        try:
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(daemon.signals, scope, listener)
                    await nursery.start(daemon.serve, listener)
                    await trio.to_thread.run_sync(daemon.write_status)
                    notify("READY=1", env)
                    log.info("abcd daemon %s listening on %s (pid %d)", __version__,
                             daemon.stats.socket, os.getpid())
                    task_status.started(daemon)
                    nursery.start_soon(daemon.intake_loop)
                    nursery.start_soon(daemon.drain_loop)
                    nursery.start_soon(daemon.spool_watch)
                    if config.watch_roots:
                        nursery.start_soon(daemon.root_watch)
                    interval = watchdog_interval(env) or config.watchdog_fallback_s
                    if interval:
                        nursery.start_soon(daemon.watchdog, interval)
                    await daemon.stopping.wait()
                    # Let the loops finish their current item, then stop the rest.
                    with trio.move_on_after(config.shutdown_grace_s):
                        while daemon.drain_lock.locked():
                            await trio.sleep(0.05)
                    nursery.cancel_scope.cancel()
        finally:
            if inherited is None:
                try:
                    os.unlink(socket_path(env))
                except OSError:
                    pass
            log.info("abcd daemon stopped")
    finally:
        os.close(lock_fd)
