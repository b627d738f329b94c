"""What an ingest run says it did: msgspec Structs, JSON-able, identical in-process and
over the wire, plus the per-repository summary built from them (pure).

Vocabulary of ``Listed.reason`` (machine-readable; ``detail`` is the sentence a user
reads):

- ``symlink`` — a symlinked file or directory; never followed.
- ``not-regular`` — a FIFO, device or socket named like a transcript.
- ``too-deep`` — a directory more than :data:`~.layout.MAX_DEPTH` levels below a root.
- ``unreadable`` — a directory or file that could not be read.
- ``over-cap`` — a transcript larger than the transcript cap (refused whole).
- ``root-missing`` — a root that does not exist or is not a directory.
- ``not-a-transcript`` — a ``.jsonl`` that is not one conversation: an unrecognised name
  in a ``subagents`` folder (a workflow journal), or no line names a session (a title
  or snapshot file).
- ``bad-id`` — a session or agent id that is not a safe id (an id becomes a file name).
- ``ambiguous-session`` — an older-layout sub-agent whose lines name no session or
  several.
- ``ambiguous-agent-id`` — a sub-agent whose lines name another agent.
- ``ambiguous-owner`` — one session, two repositories (by cwd or by lanes); not guessed.
- ``same-key`` — another file of this run holds different bytes for the same
  (session, agent); the largest is staged, the others wait for a later run.
- ``no-repository`` — (in ``unowned``) the owning repository cannot be found.
- ``stage-failed`` — (in ``failed``) staging refused or the disk failed.
"""

from __future__ import annotations

import msgspec

from ..queue.drain import DrainResult


class Listed(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One file (or directory) that was not staged, and why."""

    path: str
    reason: str
    detail: str = ""
    session_id: str = ""
    agent_id: str = ""
    root_sha: str = ""


class StagedItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One transcript staged (or, in a dry run, that would be)."""

    root_sha: str
    source_path: str
    session_id: str
    bytes: int
    agent_id: str = ""
    agent_type: str = ""
    spawn_attribution: str = ""
    via: str = ""
    name: str = ""
    replaced: bool = False


class RepoSummary(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One repository's line of the summary table."""

    root_sha: str
    repo_root: str = ""
    sessions: int = 0
    main_threads: int = 0
    subagents: int = 0
    bytes: int = 0
    staged: int = 0
    staged_bytes: int = 0
    present: int = 0
    failed: int = 0
    skipped: dict[str, int] = {}


class IngestReport(msgspec.Struct, kw_only=True):
    """The whole run. ``staged`` lists what was staged (with ``dry_run``: what would be);
    ``present`` counts transcripts already in the corpus (a record with the same bytes,
    or a staged copy with identical bytes)."""

    roots: list[str]
    dry_run: bool = False
    since: str = ""
    into: str = ""
    files: int = 0
    bytes: int = 0
    empty: int = 0
    older: int = 0
    present: int = 0
    staged: list[StagedItem] = []
    repositories: list[RepoSummary] = []
    unowned: list[Listed] = []
    skipped: list[Listed] = []
    failed: list[Listed] = []
    warnings: list[Listed] = []
    #: Set when the front door drained what this run staged (see :mod:`.request`).
    drain: DrainResult | None = None

    def staged_lanes(self) -> list[str]:
        """Root SHAs of the lanes this run staged into, sorted (what a drain should take)."""
        return sorted({item.root_sha for item in self.staged if item.name})

    def skip_counts(self) -> dict[str, int]:
        """``reason`` → count over ``skipped``, ``unowned`` and ``failed``."""
        counts: dict[str, int] = {}
        for listed in (*self.skipped, *self.unowned, *self.failed):
            counts[listed.reason] = counts.get(listed.reason, 0) + 1
        return dict(sorted(counts.items()))


class Owned(msgspec.Struct, kw_only=True, frozen=True):
    """A transcript the summary attributes to a repository (staged or present)."""

    root_sha: str
    repo_root: str
    session_id: str
    agent_id: str
    bytes: int
    present: bool
    path: str = ""


#: ``FileOutcome.outcome`` values: the file's bytes are in the corpus or the queue
#: already (``held``), were staged by this run (``staged``; ``would-stage`` in a dry
#: run), or were not, and why (``unowned``, ``skipped``, ``failed``), or it is empty.
HELD, STAGED, WOULD_STAGE, UNOWNED, SKIPPED, FAILED, EMPTY = (
    "held", "staged", "would-stage", "unowned", "skipped", "failed", "empty")


class Verdict(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a run did with a transcript file, and what it learnt of it. ``sha256`` is the
    digest of the bytes the run read ("" when it read none)."""

    outcome: str = ""
    sha256: str = ""
    root_sha: str = ""
    session_id: str = ""
    agent_id: str = ""
    reason: str = ""
    detail: str = ""

    def verdict(self) -> dict:
        """The verdict's fields alone (to carry them into another Verdict)."""
        return {f: getattr(self, f) for f in Verdict.__struct_fields__}


class FileOutcome(Verdict, kw_only=True):
    """One run's :class:`Verdict` on the file at ``path``."""

    path: str


def file_outcomes(report: IngestReport, owned: list[Owned], found_paths: list[tuple[str, int]],
                  digests: dict[str, str]) -> dict[str, FileOutcome]:
    """Per file of ``found_paths`` ((path, size) pairs), what the run did. Pure. A file
    the run could not find again (it vanished) has no entry."""
    out: dict[str, FileOutcome] = {}
    wanted = {path for path, _ in found_paths}
    for path, size in found_paths:
        if size == 0:
            out[path] = FileOutcome(path=path, outcome=EMPTY)
    staged = WOULD_STAGE if report.dry_run else STAGED
    for item in owned:
        if item.path in wanted:
            out[item.path] = FileOutcome(path=item.path, outcome=HELD if item.present else staged,
                                         root_sha=item.root_sha, session_id=item.session_id,
                                         agent_id=item.agent_id)
    for kind, listed in ((UNOWNED, report.unowned), (SKIPPED, report.skipped), (FAILED, report.failed)):
        for item in listed:
            if item.path in wanted:
                out[item.path] = FileOutcome(path=item.path, outcome=kind, reason=item.reason,
                                             detail=item.detail, root_sha=item.root_sha,
                                             session_id=item.session_id, agent_id=item.agent_id)
    for outcome in out.values():
        outcome.sha256 = digests.get(outcome.path, "")
    return out


def summarise(owned: list[Owned], report: IngestReport) -> list[RepoSummary]:
    """The per-repository table: one row per root SHA, sorted by SHA. Pure.

    ``sessions`` counts distinct session ids among the repository's transcripts;
    ``skipped`` and ``failed`` count the report's entries that name the repository.
    """
    rows: dict[str, RepoSummary] = {}
    sessions: dict[str, set[str]] = {}

    def row(sha: str) -> RepoSummary:
        if sha not in rows:
            rows[sha] = RepoSummary(root_sha=sha, skipped={})
            sessions[sha] = set()
        return rows[sha]

    for item in owned:
        r = row(item.root_sha)
        if item.repo_root and not r.repo_root:
            r.repo_root = item.repo_root
        sessions[item.root_sha].add(item.session_id)
        r.bytes += item.bytes
        if item.agent_id:
            r.subagents += 1
        else:
            r.main_threads += 1
        if item.present:
            r.present += 1
        else:
            r.staged += 1
            r.staged_bytes += item.bytes
    for listed in report.skipped:
        if listed.root_sha:
            r = row(listed.root_sha)
            r.skipped[listed.reason] = r.skipped.get(listed.reason, 0) + 1
    for listed in report.failed:
        if listed.root_sha:
            row(listed.root_sha).failed += 1
    for sha, r in rows.items():
        r.sessions = len(sessions[sha])
    return [rows[sha] for sha in sorted(rows)]
