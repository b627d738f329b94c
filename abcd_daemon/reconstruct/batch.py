"""Many sessions at once: ``abcd history reconstruct ID… | --all | --all-repos``.

:func:`plan_batch` turns what the caller named (ids or prefixes, one lane or every
lane, ``--since``) into the sessions to reconstruct; :func:`reconstruct_batch` yields one
:class:`BatchItem` per session, in that order — the
:class:`~.schema.Reconstruction`, or the refusal that stopped that one session (a key
that names no session, or several, is one such item). A failing session never stops
the rest. Sessions of different repositories that share an
id would write the same two file names; every one after the first is reported failed
rather than silently overwriting it.

Pure and synchronous like the rest of the core: the daemon serves it from a worker
thread (:mod:`abcd_daemon.server.batch`), the CLI runs it in-process when no daemon
answers; neither writes a file here. One core: a process pool (forkserver workers, results
pickled back in order) was measured and lost on this 2-core machine — the real fixture
corpus (44 sessions) took 1.75 s against 0.85 s in one process, six 8 MB sessions 1.2–1.8 s
against 0.55–0.81 s — as starting the workers and shipping the artefacts back cost more
than a second core gave (2026-12-01, load 5–7).
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from ..errors import AbcdError, InputError
from ..paths import Home
from ..store.lane import Lane, list_lanes
from ..store.sessions import SessionRef, select_sessions
from .api import reconstruct
from .schema import ReconstructOptions, Reconstruction


class BatchItem(msgspec.Struct, kw_only=True):
    """One session of a batch: its reconstruction, or why there is none."""

    session: SessionRef
    result: Reconstruction | None = None
    error: AbcdError | None = None


class BatchPlan(msgspec.Struct, kw_only=True):
    """The sessions a batch covers (oldest first), and each named key that stands for
    none — unknown, or an ambiguous prefix — with the refusal that says so."""

    sessions: list[SessionRef] = []
    unresolved: list[tuple[str, AbcdError]] = []

    @property
    def total(self) -> int:
        return len(self.sessions) + len(self.unresolved)


def plan_batch(home: Home, *, root_sha: str, all_repos: bool, keys: list[str],
               since: str = "") -> BatchPlan:
    """What a batch covers. ``root_sha`` is the current lane (ignored with
    ``all_repos``); ``keys`` are ids or unique prefixes (none: every session); ``since``
    (``YYYY-MM-DD`` or RFC 3339) keeps sessions with a record captured at or after it.
    A key that names no single session is unresolved, not a refusal of the batch.
    Raises InputError for a bad date, or a ``since`` given with keys."""
    if since and keys:
        raise InputError("--since selects among every session (--all or --all-repos); "
                         "it cannot narrow named sessions")
    since_ns = 0
    if since:
        from ..ingest.run import parse_since  # one reading of a date for every verb

        since_ns = parse_since(since)
    lanes = list_lanes(home) if all_repos else [Lane(home, root_sha)]
    if not keys:
        return BatchPlan(sessions=select_sessions(lanes, [], since_ns=since_ns))
    plan = BatchPlan()
    for key in dict.fromkeys(keys):
        try:
            plan.sessions += select_sessions(lanes, [key])
        except AbcdError as exc:
            plan.unresolved.append((key, exc))
    unique = {(r.root_sha, r.session_id): r for r in plan.sessions}
    plan.sessions = sorted(unique.values(), key=lambda r: (r.started_at, r.session_id, r.root_sha))
    return plan


def reconstruct_batch(home: Home, plan: BatchPlan, *, mode: str,
                      max_block_bytes: int, now_ns: int) -> Iterator[BatchItem]:
    """One item per unresolved key (its refusal), then per planned session."""
    for key, error in plan.unresolved:
        yield BatchItem(session=SessionRef(session_id=key, root_sha=""), error=error)
    seen: dict[str, str] = {}
    for ref in plan.sessions:
        if ref.session_id in seen:
            yield BatchItem(session=ref, error=AbcdError(
                f"session {ref.session_id} is also stored for repository {seen[ref.session_id]}; "
                "its files would overwrite that one's",
                hint="reconstruct it on its own into another --out"))
            continue
        seen[ref.session_id] = ref.repository or ref.root_sha[:12]
        try:
            opts = ReconstructOptions(session_id=ref.session_id, mode=mode,
                                      max_block_bytes=max_block_bytes)
            result = reconstruct(Lane(home, ref.root_sha), opts, now_ns=now_ns)
        except AbcdError as exc:
            yield BatchItem(session=ref, error=exc)
            continue
        yield BatchItem(session=ref, result=result)
