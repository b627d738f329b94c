"""The abcd daemon: one trio nursery tree per user.

::

    run_daemon()                          instance lock held for the whole life
    └── root nursery
        ├── serve            accept loop on the Unix socket (bound or inherited)
        │   └── connection   one task per client: peer uid check, handshake,
        │                    replies (connection.py, replies.py, handlers.py)
        ├── intake_loop      spool/new → stage, one payload at a time, arrival order
        ├── spool_watch      watchfiles on spool/new (stop_event) → rings intake
        │                    (intake_loop.py)
        ├── drain_loop       budgeted passes over every lane → records / quarantine
        │                    (drain_loop.py)
        ├── follow           the harness store, watch_roots and sessions hooks named →
        │                    stage settled transcripts; start-up and SessionStart
        │                    catch-ups (abcd_daemon.ingest.follow)
        ├── watchdog         WATCHDOG=1 pings when systemd asks for them
        └── signals          SIGTERM/SIGINT: stop accepting, finish the current item
                             within the grace period, exit 0; a second signal exits now

:class:`Daemon` is the state the tasks share (wake events, limiters, counters, the
status file); the tasks themselves live in the modules named above.

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
from ..intake.failed import failed_totals, sweep_orphan_reasons
from ..intake.resolve import LaneResolver
from ..intake.spool import SpoolListing, list_spool, spool_locations
from ..paths import Home, socket_path
from ..queue.scanners import ScannerPool
from ..queue.survey import survey_backlog
from ..status import DaemonStatus, summarise
from ..store.lane import list_lanes
from ..store.record import format_rfc3339_ns
from ..store.rescan import stale_survey
from .connection import serve
from .drain_loop import drain_loop
from .intake_loop import intake_loop, spool_watch, take_now
from .handlers import Handlers
from .instance import acquire_instance_locks, bind_socket, inherited_socket
from .memory import tune_allocator
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
        #: Serialises intake's takers: the loop and `abcd history retry`. Re-entrant: a
        #: retry holds it from moving its payloads back into spool/new until each is
        #: taken (take_now takes it again), so the loop never takes a retried payload
        #: from under it and the retry never reports "gone" for what the loop staged.
        self.intake_lock = threading.RLock()
        self.redaction_limiter = trio.CapacityLimiter(config.redaction_workers)
        self.io_limiter = trio.CapacityLimiter(4)
        self.intake_wake = trio.Event()
        #: Set once intake has swept the spool after start (the follow task's catch-up
        #: waits for it, so hook-spooled transcripts are staged with their lineage first).
        self.intake_swept = trio.Event()
        self.drain_wake = trio.Event()
        self.stopping = trio.Event()
        #: The store this daemon serves, as the handshake names it.
        self.store = os.path.realpath(home.root)
        self.stats = DaemonStatus(version=__version__, pid=os.getpid(),
                                  started_at=format_rfc3339_ns(self.started_ns),
                                  home=str(home.root))
        #: path → trio time before which a failed item is not retried (trio's clock is
        #: the daemon's clock: every timer in the loops is measured on it).
        self.retry_after: dict[str, float] = {}
        from ..ingest.follow import Follower

        self.follower = Follower(self)
        from ..index.keeper import IndexKeeper

        #: the search and usage index (written by the drain loop, read by requests)
        self.index = IndexKeeper(home)
        self.handlers = Handlers(home, config, self.scanners, drain_lock=self.drain_lock,
                                 status=self.snapshot, take_one=lambda path: take_now(self, path),
                                 intake_lock=self.intake_lock,
                                 missing=self.follower.survey, index=self.index)
        #: Every spool intake sweeps (the home's, then the shim's fallbacks).
        self.spools = spool_locations(home, self.env)

    # -- wake-ups ----------------------------------------------------------------
    def ring(self) -> None:
        self.intake_wake.set()

    def list_spool(self) -> SpoolListing:
        """List every spool (a worker-thread call); a spool refused for the first time is
        logged, and the refusals are kept for ``status.json`` and ``abcd daemon status``."""
        listing = list_spool(self.spools)
        known = {x.path for x in self.stats.refused_spools}
        for refused in listing.refused:
            if refused.path not in known:
                log.warning("not sweeping spool %s: %s", refused.path, refused.reason)
        self.stats.refused_spools = listing.refused
        return listing

    # -- status ------------------------------------------------------------------
    def snapshot(self) -> DaemonStatus:
        """A fresh status (surveys the lanes; call from a worker thread)."""
        now = time.time_ns()
        status = summarise(self.stats, survey_backlog(self.home, now_ns=now, ttl_s=self.config.staged_ttl_s))
        status.updated_at = format_rfc3339_ns(now)
        status.uptime_s = round(time.monotonic() - self.started_mono, 3)
        status.spool_pending = len(self.list_spool().paths)
        status.spool_failed, status.spool_failed_bytes = failed_totals(self.home)
        status.scanner, status.stale_records = stale_survey(self.home)
        return status

    def write_status(self) -> None:
        """Rewrite ``status.json`` atomically (read by the session-start shim)."""
        import msgspec

        status = self.snapshot()
        try:
            atomic_write(self.home.status_file, msgspec.json.encode(status) + b"\n")
        except OSError as exc:
            log.warning("could not write %s: %s", self.home.status_file, exc)

    # -- small tasks -------------------------------------------------------------
    async def follow(self) -> None:
        await self.follower.run()

    async def watchdog(self, interval: float) -> None:
        while True:
            notify("WATCHDOG=1", self.env)
            await trio.sleep(interval)

    async def signals(self, received, cancel_scope: trio.CancelScope, listener) -> None:
        """Act on SIGTERM/SIGINT delivered to ``received`` (opened before the socket was
        bound, so a signal at start-up is queued, not fatal)."""
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


async def resilient(daemon: Daemon, loop) -> None:
    """Run ``loop(daemon)`` until the daemon stops; a bug that escapes it is logged,
    shown by ``abcd daemon status`` and the loop restarted after a pause — one broken
    code path must not take intake, the drain and the socket down together."""
    pause = 1.0
    while not daemon.stopping.is_set():
        try:
            await loop(daemon)
            return
        except Exception as exc:  # noqa: BLE001 - see docstring
            log.exception("%s failed; restarting it in %.0fs", loop.__name__, pause)
            daemon.stats.last_error = f"{loop.__name__} failed: {type(exc).__name__}: {exc}"
            await trio.sleep(pause)
            pause = min(pause * 2, 60.0)


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
    removed += sweep_orphan_reasons(home)
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
    tune_allocator()
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        await _run(home, config, env, received, task_status)


async def _run(home: Home, config: Config, env, received, task_status) -> None:
    lock_fds = acquire_instance_locks(home, env)
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
                    nursery.start_soon(daemon.signals, received, scope, listener)
                    await nursery.start(serve, daemon, listener)
                    await trio.to_thread.run_sync(daemon.write_status)
                    notify("READY=1", env)
                    log.info("abcd daemon %s listening on %s (pid %d)", __version__,
                             daemon.stats.socket, os.getpid())
                    task_status.started(daemon)
                    nursery.start_soon(resilient, daemon, intake_loop)
                    nursery.start_soon(resilient, daemon, drain_loop)
                    nursery.start_soon(resilient, daemon, spool_watch)
                    nursery.start_soon(resilient, daemon, Daemon.follow)
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
        for fd in lock_fds:
            os.close(fd)
