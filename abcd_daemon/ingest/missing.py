"""Coverage: the harness transcripts that are not stored yet, and why.

A transcript is *stored* when a record holds exactly its current bytes (the record's
``source_sha256``). Any other transcript under a followed root (or in a session a hook
asked to follow) is listed with the first reason that applies:

- ``over-cap`` — larger than the transcript cap: refused whole, never stored;
- ``refused`` — capture quarantined it (the reason is the quarantine's), or ingest
  cannot use it (a symlink, an id that is not an id, one session in two repositories…);
- ``no-repository`` — its recorded cwd is in no repository and no lane knows its
  session: listed, never guessed (``abcd history ingest --into`` places it);
- ``staged`` — in the queue, waiting for redaction;
- ``settling`` — changed within ``watch_settle_s`` (or the daemon is waiting for it to
  go quiet);
- ``pending`` — not taken yet: no daemon runs, or it does not follow this root.

Each item carries the days left before the harness's retention deletes it (``None``
where the store's retention is unknown). Empty files and files that hold no
conversation (a title, snapshots) are not transcripts and are never listed.

Cost: a stat per transcript. A file is read (and hashed) only when the harness ledger
does not know it in its current state; those go through an ingest dry run, so the
repository a missing transcript names is the one ingest would file it under.
"""

from __future__ import annotations

import os
from typing import Iterable

from ..config import Config
from ..paths import Home
from ..queue.staged import list_quarantined
from ..status import QUEUED, MissingItem, MissingReport, MissingSummary
from ..store.lane import list_lanes
from ..store.record import format_rfc3339_ns
from .catchup import session_walk
from .corpus import CorpusIndex
from .harness_store import Retention
from .layout import walk
from .ledger import Ledger
from .report import FAILED, SKIPPED, UNOWNED, FileOutcome
from .run import ingest_found

#: Ingest verdicts that mean "not a transcript at all" (never listed) or "wait".
_NOT_TRANSCRIPTS = ("not-a-transcript",)
_WAIT = ("same-key",)


def summarise(report: MissingReport, *, now_ns: int) -> MissingSummary:
    """The status line's figures: counts per reason (queued items left out) and the
    fewest days left."""
    items = [i for i in report.items if i.reason not in QUEUED]
    days = [i.days_left for i in items if i.days_left is not None]
    counts = {r: n for r, n in report.counts().items() if r not in QUEUED}
    return MissingSummary(total=len(items), reasons=counts, soonest_days_left=min(days) if days else None,
                          checked_at=format_rfc3339_ns(now_ns))


def _quarantined(home: Home) -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for lane in list_lanes(home):
        for entry in list_quarantined(lane):
            out[(entry.session_id, entry.agent_id)] = (lane.root_sha, entry.reason or entry.error)
    return out


def _verdict(outcome: FileOutcome, index: CorpusIndex, quarantined, *, settling: bool) -> tuple[str, str, str] | None:
    """(reason, detail, root_sha), or None when stored."""
    ids = (outcome.session_id, outcome.agent_id)
    if outcome.sha256 and index.recorded(*ids, outcome.sha256):
        return None
    if ids in quarantined:
        lane, why = quarantined[ids]
        return "refused", f"quarantined: {why}", lane
    if outcome.outcome in (SKIPPED, FAILED) and outcome.reason not in _WAIT:
        reason = "over-cap" if outcome.reason == "over-cap" else "refused"
        return reason, f"{outcome.reason}: {outcome.detail}", outcome.root_sha
    if outcome.outcome == UNOWNED:
        return "no-repository", outcome.detail, ""
    staged = index.staged_in(*ids)
    if staged:
        return "staged", "waiting for redaction (the daemon's drain, or `abcd history drain`)", staged
    if settling:
        return "settling", "still being written; staged once quiet", outcome.root_sha
    return "pending", ("not taken yet: no daemon follows it (`abcd daemon start`; the harness "
                       "store is followed unless watch_harness_store = false), or run "
                       "`abcd history ingest`"), outcome.root_sha


def survey_missing(home: Home, roots: Iterable[str], *, config: Config, now_ns: int,
                   ledger: Ledger | None = None, followed: Iterable[str] = (),
                   pending: Iterable[str] = ()) -> MissingReport:
    """Every transcript under ``roots`` (and the ``followed`` sessions) not stored yet.
    ``pending``: paths the daemon's watch is waiting on. Reads only what the ledger does
    not know (see the module docstring); writes nothing."""
    roots = [os.path.abspath(r) for r in roots]
    ledger = ledger if ledger is not None else Ledger.load(home)
    walked = walk([r for r in roots if os.path.isdir(r)])
    known_paths = {f.path for f in walked.found}
    for main in followed:
        walked.found += [f for f in session_walk(main).found if f.path not in known_paths]
    found = [f for f in walked.found if f.size > 0]
    report = MissingReport(roots=roots, checked=len(found))
    outcomes: dict[str, FileOutcome] = {}
    unknown = []
    for f in found:
        seen = ledger.get(f.path)
        if f.size > config.max_transcript_bytes:
            outcomes[f.path] = FileOutcome(path=f.path, outcome=SKIPPED, reason="over-cap",
                                           detail=f"over the {config.max_transcript_bytes}-byte "
                                                  "transcript cap (max_transcript_bytes)")
        elif seen is not None and seen.sig == (f.size, f.mtime_ns) and seen.sha256:
            outcomes[f.path] = FileOutcome(path=f.path, **seen.verdict())
        else:
            unknown.append(f)
    if unknown:
        ingest_found(home, unknown, config=config, now_ns=now_ns, roots=roots, dry_run=True,
                     outcomes=outcomes)
    index = CorpusIndex.load(home, now_ns=now_ns, ttl_s=config.staged_ttl_s)
    quarantined = _quarantined(home)
    waiting = set(pending)
    quiet_after = now_ns - int(config.watch_settle_s * 1e9)
    retention = Retention()
    for f in found:
        outcome = outcomes.get(f.path)
        if outcome is None:
            continue  # vanished while surveyed
        if outcome.outcome == SKIPPED and outcome.reason in _NOT_TRANSCRIPTS:
            report.checked -= 1
            continue
        verdict = _verdict(outcome, index, quarantined,
                           settling=f.path in waiting or f.mtime_ns > quiet_after)
        if verdict is None:
            report.stored += 1
            continue
        reason, detail, lane = verdict
        report.items.append(MissingItem(
            path=f.path, reason=reason, detail=detail, bytes=f.size,
            modified_at=format_rfc3339_ns(f.mtime_ns),
            days_left=retention.days_left(f.path, f.mtime_ns, now_ns),
            session_id=outcome.session_id or f.session_id, agent_id=outcome.agent_id or f.agent_id,
            root_sha=lane))
    for listed in walked.listed:
        if listed.reason not in ("root-missing", *_NOT_TRANSCRIPTS):
            report.items.append(MissingItem(path=listed.path, reason="refused",
                                            detail=f"{listed.reason}: {listed.detail}"))
    report.items.sort(key=lambda i: (i.days_left if i.days_left is not None else 1 << 30, i.path))
    return report
