"""Catching up on harness stores: stage what changed since the ledger last saw it.

Synchronous, no clock of its own (the daemon runs these in worker threads). One rule
for every catch-up: walk, keep the transcripts the harness ledger does not cover
(size + mtime; nothing it covers is read), hand them to ingest in one batch — the
lane of each is decided by ingest's ownership ladder, exactly as ``abcd history
ingest`` decides it — and record every outcome in the ledger.

- :func:`catch_up` — at daemon start, over every followed root and every session a hook
  asked to follow. A file modified within ``settle_s`` is still being written: it is
  left to the watcher (``deferred``). Transcripts no repository owned are tried again:
  the repository may exist by now.
- :func:`catch_up_project` — on SessionStart. The harness has just started a session in
  a project folder, so the project's earlier sessions are over (``/exit`` and print
  mode fire no SessionEnd): every other transcript there that changed since its last
  capture is staged now, quiet or not. One still running in another window is staged
  early and superseded by its longer self later. The new session's own main thread is
  left to the watcher. Only a folder inside a followed root, or one laid out as the
  harness lays out projects (``…/projects/<project>/``), is walked: a payload cannot
  make the daemon walk an arbitrary directory.
"""

from __future__ import annotations

import os
import time

import msgspec

from ..config import Config
from ..paths import Home
from .harness_store import PROJECTS
from .layout import Found, Walk, classify_file, scan, walk
from .ledger import Ledger
from .report import FileOutcome, IngestReport, Listed
from .run import ingest_found


class CatchUp(msgspec.Struct, kw_only=True):
    """What one catch-up did: transcripts found, read again (not covered by the
    ledger), staged, left to the watcher; and what ingest refused, with reasons.
    ``seconds``: the whole catch-up, walk included."""

    found: int = 0
    read: int = 0
    staged: int = 0
    deferred: int = 0
    seconds: float = 0.0
    problems: list[Listed] = []


def session_walk(main: str) -> Walk:
    """A main thread (when it is one, as :mod:`.layout` says) and the transcripts in
    its ``<session>/`` folder: a followed session."""
    out = Walk(found=[], listed=[])
    try:
        found = classify_file(None, main, os.lstat(main))
    except OSError:
        return out
    if isinstance(found, Listed):
        out.listed.append(found)
    elif found is not None and found.is_main:
        out.found.append(found)
        folder = main[: -len(".jsonl")]
        if os.path.isdir(folder) and not os.path.islink(folder):
            scan(os.path.dirname(main), folder, out=out)
    return out


def hand_over(home: Home, ledger: Ledger, found: list[Found], *, config: Config, now_ns: int,
              roots=()) -> IngestReport:
    """Ingest ``found`` in one batch and record each outcome in the ledger."""
    outcomes: dict[str, FileOutcome] = {}
    report = ingest_found(home, found, config=config, now_ns=now_ns, roots=roots, outcomes=outcomes)
    for item in found:
        ledger.record(item.path, item.size, item.mtime_ns, outcomes.get(item.path))
    return report


def _run(home: Home, ledger: Ledger, walked: Walk, *, config: Config, now_ns: int, roots,
         quiet_after_ns: int | None, started: float, exclude: str = "") -> CatchUp:
    out = CatchUp(found=len(walked.found), problems=list(walked.listed))
    todo = []
    for item in walked.found:
        if item.path == exclude or ledger.covers(item.path, item.size, item.mtime_ns,
                                                 retry_unowned=True):
            continue
        if quiet_after_ns is not None and item.mtime_ns > quiet_after_ns:
            out.deferred += 1
            continue
        todo.append(item)
    if todo:
        report = hand_over(home, ledger, todo, config=config, now_ns=now_ns, roots=roots)
        out.read = len(todo)
        out.staged = len(report.staged)
        out.problems += report.unowned + report.skipped + report.failed
    ledger.save()
    out.seconds = round(time.monotonic() - started, 3)
    return out


def catch_up(home: Home, ledger: Ledger, roots: list[str], *, config: Config, now_ns: int,
             followed: list[str] = ()) -> CatchUp:
    """The start-up catch-up over ``roots`` and the ``followed`` sessions."""
    started = time.monotonic()
    walked = walk([r for r in roots if os.path.isdir(r)])
    seen = {f.path for f in walked.found}
    for main in followed:
        for found in session_walk(main).found:
            if found.path not in seen:
                seen.add(found.path)
                walked.found.append(found)
    return _run(home, ledger, walked, config=config, now_ns=now_ns, roots=roots,
                quiet_after_ns=now_ns - int(config.watch_settle_s * 1e9), started=started)


def project_folder(transcript_path: str, roots: list[str]) -> tuple[str, str] | None:
    """(root to judge depth from, the project folder to walk) for a session's
    transcript, or None when its folder is not a harness project folder."""
    path = os.path.abspath(transcript_path)
    project = os.path.dirname(path)
    for root in roots:
        if project == root or project.startswith(root.rstrip(os.sep) + os.sep):
            return root, project
    parent = os.path.dirname(project)
    if os.path.basename(parent) == PROJECTS and os.path.basename(project):
        return parent, project
    return None


def catch_up_project(home: Home, ledger: Ledger, transcript_path: str, *, roots: list[str],
                     config: Config, now_ns: int) -> CatchUp:
    """The SessionStart catch-up of the project holding ``transcript_path``."""
    started = time.monotonic()
    where = project_folder(transcript_path, roots)
    if where is None or not os.path.isdir(where[1]) or os.path.islink(where[1]):
        return CatchUp()
    walked = scan(*where)
    walked.found.sort(key=lambda f: f.path)
    return _run(home, ledger, walked, config=config, now_ns=now_ns, roots=[where[0]],
                quiet_after_ns=None, started=started, exclude=os.path.abspath(transcript_path))
