"""An ingest as a front door asks for it: stage, then drain what was staged.

Used by the daemon's ``IngestRequest`` handler (in a worker thread, streaming
``progress``) and by the CLI when no daemon answers, so both answer the same way:

1. :func:`~.run.ingest` over the roots (default: the harness store,
   :func:`~.harness_store.projects_root`);
2. unless it was a dry run or ``drain`` is off, the lanes it staged into are drained to
   the end (no budget: the user asked for the corpus now), entry by entry in the
   drain's own order, with ``progress`` announcing a third phase. The drain runs under
   ``drain_lock`` when one is given (the daemon's drain loop must not take the same
   entries concurrently).

The report carries the drain's result in ``drain``.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable

from ..config import Config, DrainBudget
from ..paths import Home
from ..queue.drain import DrainResult, drain_pass
from ..store.lane import Lane
from .harness_store import projects_root
from .report import IngestReport
from .run import Progress, ingest


def drain_lanes(lanes: list[Lane], *, scanners, config: Config, now_ns: Callable[[], int] = time.time_ns,
                progress: Progress | None = None) -> DrainResult:
    """Drain ``lanes`` completely (no budget), reporting progress per entry."""
    return drain_pass(lanes, DrainBudget(), scanners=scanners, config=config, now_ns=now_ns,
                      progress=progress)


def ingest_request(home: Home, req, *, config: Config, scanners,
                   drain_lock=None, progress: Progress | None = None) -> IngestReport:
    """Answer an :class:`~abcd_daemon.wire.messages.IngestRequest` (fields ``roots``,
    ``since``, ``dry_run``, ``into``, ``drain``). Raises InputError for a malformed
    ``since`` or an unusable ``into``; everything found on disk is in the report."""
    roots = list(req.roots) or [projects_root()]
    report = ingest(home, roots, config=config, now_ns=time.time_ns(), since=req.since or None,
                    dry_run=req.dry_run, into=req.into or None, progress=progress)
    if req.dry_run or not req.drain or not report.staged_lanes():
        return report
    lanes = [Lane(home, sha) for sha in report.staged_lanes()]
    with drain_lock if drain_lock is not None else contextlib.nullcontext():
        report.drain = drain_lanes(lanes, scanners=scanners, config=config, progress=progress)
    return report
