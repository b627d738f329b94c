"""The daemon's ``follow`` task: no session left behind.

Completeness must not depend on hooks firing (``/exit`` and print mode fire no
SessionEnd, a killed harness fires nothing), so the daemon follows the transcripts
themselves:

- the harness store (``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``) unless
  ``watch_harness_store = false``, and every ``watch_roots`` entry: one
  :class:`~.watch.RootWatch` each, a transcript staged once quiet for ``watch_settle_s``
  and again when it grows, its sub-agents with it;
- every session a Stop / UserPromptSubmit / SessionStart marker names outside those
  roots: one :class:`~.live.FileWatch`;
- at start, a catch-up (:func:`~.catchup.catch_up`) after intake's first sweep, so what
  hooks spooled while the daemon was down is staged first and keeps its lineage;
- on SessionStart, a catch-up of that project's earlier sessions
  (:func:`~.catchup.catch_up_project`).

Every transcript is staged through ingest (lanes decided by its ownership ladder) and
recorded in the harness ledger (:mod:`.ledger`), which the watches consult so nothing
is read twice in one state. The ledger is saved, and the status's ``missing`` summary
refreshed (:mod:`.missing`), a couple of seconds after anything changed and at least
hourly (days left shrink). Hints from intake arrive through :meth:`Follower.hint` on
the event loop; they are queued, never lost while the task restarts.
"""

from __future__ import annotations

import logging
import math
import os
import time
from functools import partial

import trio

from ..status import WatchRootState
from ..store.record import format_rfc3339_ns
from .catchup import catch_up, catch_up_project, session_walk
from .harness_store import coverage_roots, followed_roots, projects_root
from .ledger import Ledger
from .live import FileWatch
from .missing import summarise, survey_missing
from .run import ingest_file
from .watch import RootWatch, WatchEvent

log = logging.getLogger("abcd.daemon.follow")

#: How long intake's first sweep may hold the start-up catch-up back.
FIRST_SWEEP_WAIT_S = 30.0
#: Quiet time after a change before the ledger is saved and the summary refreshed.
SAVE_AFTER_S = 2.0
#: The summary is refreshed at least this often even when nothing changes, and at most
#: once per this many times as long as the last refresh took.
REFRESH_S = 3600.0
REFRESH_SHARE = 20
#: A watched root is walked again this often (events the kernel dropped), and an idle
#: watch checks its root is still there (or an absent one has appeared) this often.
RESCAN_S = 300.0
IDLE_CHECK_S = 30.0


class Follower:
    """What the follow task shares with the rest of the daemon."""

    def __init__(self, daemon) -> None:
        self.daemon = daemon
        config = daemon.config
        self.roots = followed_roots(config, daemon.env)
        self.harness_root = projects_root(daemon.env) if config.watch_harness_store else ""
        self.states = {root: WatchRootState(path=root, state="starting") for root in self.roots}
        self.ledger = Ledger(daemon.home)
        self.watches: list[RootWatch] = []
        self.files: FileWatch | None = None
        self._hints_in, self._hints = trio.open_memory_channel(math.inf)
        self._changed = trio.Event()
        daemon.stats.harness_store = self.states.get(self.harness_root)
        daemon.stats.watch_roots = [s for r, s in self.states.items() if r != self.harness_root]

    # -- called on the event loop by the rest of the daemon ------------------------
    def hint(self, event: str, transcript_path: str) -> None:
        """A hook named a live session (``event``: stop, user-prompt-submit or
        session-start); follow it, and on session-start catch up on its project."""
        if transcript_path:
            self._hints_in.send_nowait((event, transcript_path))

    def changed(self) -> None:
        """Something the summary depends on changed (a drain pass stored a record)."""
        self._changed.set()

    # -- worker-thread callbacks ---------------------------------------------------
    def _root_of(self, path: str) -> str | None:
        owners = [r for r in self.roots if path.startswith(r.rstrip("/") + "/")]
        return max(owners, key=len) if owners else None

    def on_settled(self, path: str):
        try:
            st = os.lstat(path)
        except OSError:
            return None
        outcomes: dict = {}
        root = self._root_of(path)
        report = ingest_file(self.daemon.home, path, config=self.daemon.config,
                             now_ns=time.time_ns(), root=root, outcomes=outcomes)
        self.ledger.record(path, st.st_size, st.st_mtime_ns, outcomes.get(path))
        state = self.states.get(root) if root else None
        problems = report.unowned + report.skipped + report.failed
        if state is not None:
            state.staged += len(report.staged)
            if problems:
                state.last_error = f"{os.path.basename(path)}: {problems[0].detail}"
        for problem in problems:  # a session outside any repository is common, not a fault
            log.info("watch: %s not staged (%s): %s", path, problem.reason, problem.detail)
        return report

    def survey(self, *, now_ns: int):
        """``abcd history missing`` as this daemon sees it: its ledger, the sessions it
        follows, the files its watches wait on (worker thread)."""
        pending = [p for w in self._all_watches() for p in w.tracker.pending()]
        return survey_missing(self.daemon.home, coverage_roots(self.daemon.config, self.daemon.env),
                              config=self.daemon.config, now_ns=now_ns, ledger=self.ledger,
                              followed=self.ledger.followed(), pending=pending)

    def refresh(self) -> None:
        """Save the ledger and recompute the missing summary (worker thread)."""
        self.ledger.save()
        now = time.time_ns()
        self.daemon.stats.missing = summarise(self.survey(now_ns=now), now_ns=now)
        self.daemon.stats.followed_sessions = len(self.ledger.followed())

    def _all_watches(self):
        return [*self.watches, *([self.files] if self.files is not None else [])]

    # -- the task ------------------------------------------------------------------
    def report(self, event: WatchEvent) -> None:
        state = self.states.get(event.root)
        if event.kind in ("armed", "root-returned") and state is not None:
            state.state = "watching"
        elif event.kind == "root-missing" and state is not None:
            state.state = "missing"
            log.info("watch root %s is not there; watching for it to appear", event.root)
        elif event.kind == "skipped" and state is not None:
            state.skipped += 1
            log.info("watch: skipped %s (%s)", event.path, event.reason)
        elif event.kind == "failed":
            if state is not None:
                state.last_error = event.reason
            log.warning("watch: %s failed: %s", event.path or event.root, event.reason)
        elif event.kind == "settled":
            self.daemon.drain_wake.set()
            self._changed.set()
        elif event.kind == "gone":
            self.ledger.forget(event.path)
            self._changed.set()
        elif event.kind == "unfollowed":
            self.ledger.unfollow(event.path)
            self._changed.set()

    def _caught_up(self, result, what: str) -> None:
        reasons: dict[str, int] = {}
        for problem in result.problems:
            reasons[problem.reason] = reasons.get(problem.reason, 0) + 1
            log.debug("watch: %s not staged (%s): %s", problem.path, problem.reason, problem.detail)
        if reasons:
            log.info("watch: %s left %s not staged (`abcd history missing --all-repos` lists "
                     "them)", what, ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())))
        if result.staged:
            log.info("watch: %s staged %d transcript(s)", what, result.staged)
            self.daemon.drain_wake.set()
        self._changed.set()

    async def _start(self) -> None:
        daemon = self.daemon
        self.ledger = await trio.to_thread.run_sync(Ledger.load, daemon.home)
        with trio.move_on_after(FIRST_SWEEP_WAIT_S):
            await daemon.intake_swept.wait()
        for state in self.states.values():
            state.state = "catching-up"
        try:
            result = await trio.to_thread.run_sync(partial(
                catch_up, daemon.home, self.ledger, self.roots, config=daemon.config,
                now_ns=time.time_ns(), followed=self.ledger.followed()))
        except Exception as exc:  # noqa: BLE001 - the watch itself still runs
            log.warning("watch: the start-up catch-up failed (%s); watching for changes only", exc)
            return
        stamp = format_rfc3339_ns(time.time_ns())
        for state in self.states.values():
            state.caught_up_at, state.catch_up_s, state.caught_up = stamp, result.seconds, result.staged
        log.info("watch: caught up on %d transcript(s) in %.2fs (%d read, %d staged, %d still "
                 "being written)", result.found, result.seconds, result.read, result.staged,
                 result.deferred)
        self._caught_up(result, "catch-up")

    async def _hints_loop(self) -> None:
        async for event, path in self._hints:
            path = os.path.abspath(path)
            outside = self._root_of(path) is None
            if outside and (await trio.to_thread.run_sync(session_walk, path)).found:
                if self.ledger.follow(path):
                    log.info("watch: following %s (a %s hook named it)", path, event)
                    self._changed.set()
                self.files.follow(path)
            if event == "session-start":
                result = await trio.to_thread.run_sync(partial(
                    catch_up_project, self.daemon.home, self.ledger, path, roots=self.roots,
                    config=self.daemon.config, now_ns=time.time_ns()))
                self._caught_up(result, f"SessionStart catch-up of {os.path.dirname(path)}")

    async def _saver(self) -> None:
        took = 0.0
        while True:
            with trio.move_on_after(REFRESH_S):
                await self._changed.wait()
            # A busy drain changes things every pass: never spend more than 1/REFRESH_SHARE
            # of the time surveying.
            await trio.sleep(max(SAVE_AFTER_S, took * REFRESH_SHARE))
            self._changed = trio.Event()
            started = trio.current_time()
            await trio.to_thread.run_sync(self.refresh, limiter=self.daemon.io_limiter)
            took = trio.current_time() - started
            await trio.to_thread.run_sync(self.daemon.write_status, limiter=self.daemon.io_limiter)

    async def run(self) -> None:
        """The daemon's ``follow`` task (see the module docstring)."""
        daemon = self.daemon
        try:
            await self._start()
            common = dict(settle_s=daemon.config.watch_settle_s, on_settled=self.on_settled,
                          stop_event=daemon.stopping, report=self.report, poll_s=1.0,
                          known=self.ledger.handled_sig)
            self.watches = [RootWatch(root, rescan_s=RESCAN_S, idle_s=IDLE_CHECK_S,
                                      missing_poll_s=IDLE_CHECK_S, **common)
                            for root in self.roots]
            self.files = FileWatch(**common)
            for path in self.ledger.followed():
                self.files.follow(path)
            async with trio.open_nursery() as nursery:
                for watch in self.watches:
                    nursery.start_soon(watch.run)
                nursery.start_soon(self.files.run)
                nursery.start_soon(self._hints_loop)
                nursery.start_soon(self._saver)
                await daemon.stopping.wait()
                nursery.cancel_scope.cancel()
        finally:
            self.ledger.save()
