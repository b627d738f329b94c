"""Running an ingest: walk, read, plan, stage. Synchronous, no event loop, no clock of
its own (``now_ns`` comes in); the CLI calls it in-process and the daemon calls the same
function in a worker thread, streaming ``progress``.

Phases, each announced by a ``progress(0, files_total, 0, bytes_total)`` call and then
advanced file by file — ``progress(files_done, files_total, bytes_done, bytes_total)``:

1. *read*: every transcript-shaped file under the roots (modified at or after
   ``since``) is read guarded and hashed; one the corpus already holds is counted
   present there and then, the others' lines are parsed for their facts and
   sub-agents' meta sidecars are read (streamed, :mod:`.readfile`: a transcript of
   any size under ``max_transcript_bytes`` / ``max_line_bytes`` is read in memory
   bounded by its longest line);
2. *stage* (not with ``dry_run``): each planned transcript is copied again, block by
   block, and staged
   with ``source_path`` = the file and ``repo_root`` = the owning checkout; main threads
   first. A file that changed since it was read is staged as it is now (the drain and
   capture supersede by prefix). A main thread placed by its own cwd notes its session
   in the lane, as intake does.

Never raises for what it finds on disk: every refusal is in the report. Raises
:class:`~abcd_daemon.errors.InputError` for a malformed ``since`` or an ``into`` that is
not a repository with commits.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Callable, Iterable

from ..config import Config
from ..errors import AbcdError, InputError, ReadRefused
from ..intake.harness import read_lineage
from ..paths import Home
from ..store.empty_mains import note_empty_main
from ..store.lane import Lane
from ..store.record import parse_rfc3339_ns
from .corpus import CorpusIndex
from .facts import Facts, facts_of
from .readfile import file_digest, file_facts
from .layout import Found, classify_file, main_path, walk
from .execute import execute, owned_by, staged_item
from .owner import GitCache, Owner, decide, into_owner
from .plan import Candidate, identify, plan_ingest
from .report import FileOutcome, IngestReport, Listed, Owned, file_outcomes, summarise

Progress = Callable[[int, int, int, int], None]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_since(text: str) -> int:
    """``YYYY-MM-DD`` (midnight UTC) or an RFC 3339 time → ns since the epoch.
    Raises :class:`InputError`."""
    try:
        if _DAY.fullmatch(text):
            day = _dt.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=_dt.timezone.utc)
            return int(day.timestamp()) * 1_000_000_000
        return parse_rfc3339_ns(text)
    except ValueError:
        raise InputError(f"--since {text!r} is not a date",
                         hint="give YYYY-MM-DD (UTC) or an RFC 3339 time") from None


_REFUSALS = {"not-regular": "not-regular", "too-big": "over-cap"}


def _refusal(path: str, exc: ReadRefused) -> Listed:
    return Listed(path=path, reason=_REFUSALS.get(exc.reason, "unreadable"), detail=str(exc))


class _Reader:
    """Reads candidates (with progress) and, on demand, the main threads sub-agents
    need for ownership; decides each session once.

    With an index loaded before reading, a transcript whose path names its session and
    agent and whose bytes the corpus already holds is counted present without parsing
    its lines — the run that finds nothing new costs a read and a hash per file."""

    def __init__(self, git: GitCache, config: Config, index: CorpusIndex | None = None,
                 into_lanes: tuple[str, ...] | None = None) -> None:
        self.config = config
        self.index = index or CorpusIndex()
        self.early = index is not None
        self.into_lanes = into_lanes
        self.git = git
        self.facts: dict[str, Facts | None] = {}
        self.sessions: dict[str, Owner] = {}
        self.present: list[Owned] = []
        #: path → sha256 of the bytes read, for every file read this run.
        self.digests: dict[str, str] = {}

    def read(self, found: list[Found], report: IngestReport,
             progress: Progress | None) -> list[Candidate]:
        total_bytes = sum(f.size for f in found)
        done_bytes = 0
        if progress:
            progress(0, len(found), 0, total_bytes)
        out = []
        for i, item in enumerate(found, 1):
            facts = self._facts(item.path, report, item) if item.size else facts_of(b"")
            if facts is not None:
                lineage = read_lineage(item.path) if not item.is_main and facts.size else None
                out.append(Candidate(found=item, facts=facts, lineage=lineage))
            done_bytes += item.size
            if progress:
                progress(i, len(found), done_bytes, total_bytes)
        report.present += len(self.present)
        return out

    def _facts(self, path: str, report: IngestReport | None, item: Found | None = None) -> Facts | None:
        """The facts of ``path`` (read once), or None when it cannot be read or — for a
        candidate ``item`` — when the corpus already holds exactly its bytes. Streamed
        (:mod:`.readfile`): a hash pass, then — only for a file the corpus does not
        hold — a pass over its lines."""
        if path not in self.facts:
            cap, line_cap = self.config.max_transcript_bytes, self.config.max_line_bytes
            try:
                sha, size = file_digest(path, cap=cap)
                self.digests[path] = sha
                if item is not None and self._already_held(item, sha, size):
                    return None
                self.facts[path] = file_facts(path, sha256=sha, size=size, cap=cap,
                                              line_cap=line_cap)
            except ReadRefused as exc:
                self.facts[path] = None
                if report is not None and exc.reason != "missing":
                    report.skipped.append(_refusal(path, exc))
                return None
        return self.facts[path]

    def _already_held(self, item: Found, sha: str, size: int) -> bool:
        if not self.early or not item.session_id:  # the older layout names its session inside
            return False
        lanes = self.into_lanes
        lane = (self.index.recorded(item.session_id, item.agent_id, sha, lanes)
                or self.index.staged_identical(item.session_id, item.agent_id, size, sha, lanes))
        if lane:
            self.present.append(Owned(root_sha=lane, repo_root="", session_id=item.session_id,
                                      agent_id=item.agent_id, bytes=size, present=True,
                                      path=item.path))
        return bool(lane)

    def _main(self, path: str, session_id: str, facts: Facts) -> Owner:
        """The decision for a session's main-thread file (made once per file)."""
        if path not in self.sessions:
            self.sessions[path] = decide(
                session_id=session_id, harness=facts.harness, path=path, cwds=facts.cwds,
                session=None, known_lanes=self.index.lanes_knowing(session_id), git=self.git,
                is_main=True)
        return self.sessions[path]

    def owner_of(self, cand: Candidate, session_id: str) -> Owner:
        """The ownership ladder for one candidate; a sub-agent asks its session's main
        thread first (read now if it was not among the candidates)."""
        if cand.found.is_main:
            return self._main(cand.found.path, session_id, cand.facts)
        path = main_path(cand.found, session_id)
        facts = self._facts(path, None) if os.path.lexists(path) else None
        session = self._main(path, session_id, facts) if facts is not None and facts.harness else None
        return decide(session_id=session_id, harness=cand.facts.harness, path=cand.found.path,
                      cwds=cand.facts.cwds, session=session,
                      known_lanes=self.index.lanes_knowing(session_id), git=self.git, is_main=False)


def _run(home: Home, found: list[Found], report: IngestReport, *, config: Config, now_ns: int,
         dry_run: bool, into: str | None, progress: Progress | None,
         narrow: bool = False, outcomes: dict[str, FileOutcome] | None = None) -> IngestReport:
    git = GitCache()
    into_lanes = None
    target = None
    if into:
        target = into_owner(into, git)
        if not target.owned:
            raise InputError(target.reason, hint="--into names a git checkout with at least one commit")
        into_lanes = (target.root_sha,)
    if narrow:  # one file: read only the records that can be its session's
        reader = _Reader(git, config)
        candidates = reader.read(found, report, progress)
        sessions = frozenset(who[0] for c in candidates
                             if isinstance(who := identify(c.found, c.facts), tuple)) | {
            c.found.session_id for c in candidates if c.found.is_main and not c.facts.size}
        index = reader.index = CorpusIndex.load(home, now_ns=now_ns, ttl_s=config.staged_ttl_s,
                                                sessions=sessions)
    else:
        index = CorpusIndex.load(home, now_ns=now_ns, ttl_s=config.staged_ttl_s)
        reader = _Reader(git, config, index, into_lanes)
        candidates = reader.read(found, report, progress)
    owner_of = (lambda cand, session: target) if target is not None else reader.owner_of
    plan = plan_ingest(candidates, index=index, owner_of=owner_of, into_lanes=into_lanes,
                       report=report)
    owned = reader.present + plan.present
    if dry_run:
        report.staged = [staged_item(a) for a in plan.actions]
        owned += [owned_by(a, present=False) for a in plan.actions]
    else:
        execute(home, plan.actions, report, owned, config=config, now_ns=now_ns, progress=progress)
        for root_sha, session_id in plan.empty_mains:
            try:
                note_empty_main(Lane(home, root_sha), session_id, now_ns=now_ns)
            except (AbcdError, OSError) as exc:  # a marker only refines a report
                report.warnings.append(Listed(path="", reason="empty-main", session_id=session_id,
                                              root_sha=root_sha,
                                              detail=f"could not record the empty main file ({exc})"))
    report.repositories = summarise(owned, report)
    if outcomes is not None:
        outcomes.update(file_outcomes(report, owned, [(f.path, f.size) for f in found],
                                      reader.digests))
    return report


def ingest(home: Home, roots: Iterable[str], *, config: Config, now_ns: int,
           since: str | None = None, dry_run: bool = False, into: str | None = None,
           progress: Progress | None = None) -> IngestReport:
    """Stage every transcript under ``roots`` that the corpus does not hold yet.

    ``since``: only files modified at or after it (``YYYY-MM-DD`` UTC or RFC 3339).
    ``dry_run``: read and plan, write nothing (``staged`` lists what would be staged).
    ``into``: a checkout that owns everything found (overrides the ladder).
    Returns the :class:`IngestReport`; see the module docstring for what it raises.
    """
    roots = [os.path.abspath(os.path.expanduser(r)) for r in roots]
    since_ns = parse_since(since) if since else None
    report = IngestReport(roots=roots, dry_run=dry_run, since=since or "", into=into or "")
    walked = walk(roots)
    report.skipped.extend(walked.listed)
    found = [f for f in walked.found if since_ns is None or f.mtime_ns >= since_ns]
    report.older = len(walked.found) - len(found)
    report.files = len(found)
    report.bytes = sum(f.size for f in found)
    return _run(home, found, report, config=config, now_ns=now_ns, dry_run=dry_run, into=into,
                progress=progress)


#: Up to this many files, a run reads only the records their sessions can own.
NARROW_UP_TO = 16


def ingest_found(home: Home, found: list[Found], *, config: Config, now_ns: int,
                 roots: Iterable[str] = (), dry_run: bool = False,
                 outcomes: dict[str, FileOutcome] | None = None) -> IngestReport:
    """Stage (or, with ``dry_run``, plan) transcripts already found by a walk — the
    watcher's catch-ups and ``history missing``. ``outcomes``, when given, receives
    what the run did with each file (:func:`~.report.file_outcomes`)."""
    report = IngestReport(roots=list(roots), dry_run=dry_run, files=len(found),
                          bytes=sum(f.size for f in found))
    return _run(home, found, report, config=config, now_ns=now_ns, dry_run=dry_run, into=None,
                progress=None, narrow=len(found) <= NARROW_UP_TO, outcomes=outcomes)


def ingest_file(home: Home, path: str, *, config: Config, now_ns: int,
                root: str | None = None,
                outcomes: dict[str, FileOutcome] | None = None) -> IngestReport:
    """Stage one transcript (the watcher's ``on_settled``); ``root`` is the watch root it
    was found under (its depth and shape are judged from there). Its session's main
    thread is read for ownership when it is a sub-agent. A symlink, a non-regular file
    or an unrecognised name is reported, not staged. Only the records whose names can be
    its session's are read, so one file costs one directory listing per lane."""
    path = os.path.abspath(path)
    root = os.path.abspath(root) if root else None
    report = IngestReport(roots=[root or path])
    try:
        st = os.lstat(path)
    except OSError as exc:
        report.skipped.append(Listed(path=path, reason="unreadable", detail=f"cannot stat ({exc.strerror})"))
        return report
    found = classify_file(root, path, st)
    if found is None:
        return report
    if isinstance(found, Listed):
        report.skipped.append(found)
        return report
    report.files, report.bytes = 1, found.size
    return _run(home, [found], report, config=config, now_ns=now_ns, dry_run=False, into=None,
                progress=None, narrow=True, outcomes=outcomes)
