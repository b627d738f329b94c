"""Sessions of the corpus, and the short ids that name them.

A session is every record sharing one ``session_id`` in one lane. Users copy the
8-character id other tools show, so wherever a verb takes a session or agent id it
also takes a unique prefix of at least :data:`~abcd_daemon.ids.PREFIX_MIN`
characters, like git:

- an exact id always wins over a prefix (``abc123`` names session ``abc123`` even when
  ``abc1234…`` exists);
- a prefix of exactly one session (or agent) stands for it;
- a prefix of several is refused with :class:`~abcd_daemon.errors.AmbiguousId`, whose
  ``details`` list every candidate — session id, start time, repository — so the user
  can pick; a prefix shorter than the minimum is never expanded.

Reading is frontmatter-only (:func:`~.records.list_records`), except a session's start
time, which is the first ``timestamp`` in its main thread's first lines (the capture
time when the transcript carries none).
"""

from __future__ import annotations

import re

from ..errors import AbcdError, AmbiguousId, NotFoundError
from ..ids import PREFIX_MIN
from .lane import Lane
from .record import Record
from .records import list_records, read_body, resolve
from .session_ref import SessionRef

#: How much of a main thread's body is read to find its first timestamp.
_START_PEEK = 64 << 10
_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([0-9T:.+Z-]{10,40})"')


def sessions_of(lane: Lane, records: list[Record] | None = None) -> dict[str, list[Record]]:
    """The lane's records grouped by session id (each group newest first)."""
    groups: dict[str, list[Record]] = {}
    for record in list_records(lane) if records is None else records:
        groups.setdefault(record.session_id, []).append(record)
    return groups


def describe(lane: Lane, session_id: str, records: list[Record]) -> SessionRef:
    """The :class:`SessionRef` of ``session_id``'s ``records`` in ``lane``."""
    from ..queue.survey import lane_name  # the repository note intake keeps

    return SessionRef(session_id=session_id, root_sha=lane.root_sha, repository=lane_name(lane),
                      started_at=started_at(lane, records), records=len(records),
                      last_captured_at=max((r.captured_at for r in records), default=""))


def started_at(lane: Lane, records: list[Record]) -> str:
    """When the session started: the first timestamp its main thread (else its oldest
    record) carries near the top, else that record's capture time."""
    if not records:
        return ""
    first = min(records, key=lambda r: (not r.is_main_thread, r.captured_ns))
    try:
        head = read_body(lane, first)[:_START_PEEK]
    except Exception:  # noqa: BLE001 - a start time is a courtesy, never a failure
        return first.captured_at
    match = _TIMESTAMP.search(head)
    return match.group(1).decode() if match else first.captured_at


def candidate_line(ref: SessionRef) -> str:
    """One candidate of an ambiguous id: session id, start time, repository."""
    where = ref.repository or f"repository {ref.root_sha[:12]}"
    return f"{ref.session_id}  started {ref.started_at or 'unknown'}  {where}"


def _matches(lanes: list[Lane], key: str) -> list[tuple[Lane, str, list[Record]]]:
    """(lane, session id, records) of every session ``key`` names: the exact id's when
    any lane holds it, else every session it is a prefix of (at least PREFIX_MIN)."""
    exact, prefixed = [], []
    for lane in lanes:
        groups = sessions_of(lane)
        if key in groups:
            exact.append((lane, key, groups[key]))
        elif len(key) >= PREFIX_MIN:
            prefixed += [(lane, sid, recs) for sid, recs in groups.items() if sid.startswith(key)]
    return exact or prefixed


def _refuse(key: str, matches: list) -> AbcdError:
    """The refusal of a key that names several sessions (each candidate described) or
    none."""
    if matches:
        refs = sorted((describe(*m) for m in matches), key=lambda r: (r.started_at, r.session_id))
        return AmbiguousId(f"{key!r} names {len(refs)} sessions; give more of the id",
                           hint="any unique prefix of 6 or more characters will do",
                           details=[candidate_line(r) for r in refs])
    short = (f" (a prefix must be at least {PREFIX_MIN} characters)"
             if len(key) < PREFIX_MIN else "")
    return NotFoundError(f"no session {key!r} is stored{short}",
                         hint="`abcd history list` shows what is stored")


def find_session(lanes: list[Lane], key: str) -> SessionRef:
    """The one session ``key`` names in ``lanes`` (an exact id, else a unique prefix).
    Raises AmbiguousId (candidates in ``details``) or NotFoundError."""
    matches = _matches(lanes, key)
    if len(matches) == 1:
        return describe(*matches[0])
    raise _refuse(key, matches)


def expand_session(lanes: list[Lane], key: str) -> str:
    """The full id of the session ``key`` names (exact or unique prefix), or ``key``
    itself when it names none (the caller's own "not found" then says so). Raises
    AmbiguousId. Reads frontmatter only: a session is described (its main thread's
    start read) only to word an ambiguity."""
    matches = _matches(lanes, key)
    if len(matches) == 1:
        return matches[0][1]
    if matches:
        raise _refuse(key, matches)
    return key


def resolve_record(lane: Lane, key: str) -> Record:
    """:func:`~.records.resolve` (record file name, agent id, session id), then a unique
    prefix of an agent or session id. Raises AmbiguousId or NotFoundError."""
    records = list_records(lane)
    try:
        return resolve(lane, key, records)
    except NotFoundError:
        if len(key) < PREFIX_MIN:
            raise
    agents = sorted({r.agent_id for r in records if r.agent_id.startswith(key)})
    sessions = sessions_of(lane, records)
    named = sorted(sid for sid in sessions if sid.startswith(key))
    if len(agents) + len(named) == 1:
        return resolve(lane, (agents or named)[0], records)
    if not agents and not named:
        return resolve(lane, key, records)  # the NotFoundError, as it says it
    details = [candidate_line(describe(lane, sid, sessions[sid])) for sid in named]
    for agent in agents:
        owner = next(r.session_id for r in records if r.agent_id == agent)
        details.append(f"agent {agent} of " + candidate_line(describe(lane, owner, sessions[owner])))
    named_what = " and ".join(f"{n} {what}{'s' if n > 1 else ''}" for n, what in
                              ((len(named), "session"), (len(agents), "agent")) if n)
    raise AmbiguousId(f"{key!r} names {named_what}; give more of the id",
                      hint="any unique prefix of 6 or more characters will do", details=details)


def select_sessions(lanes: list[Lane], keys: list[str], *, since_ns: int = 0) -> list[SessionRef]:
    """The sessions a batch names: each of ``keys`` (exact or prefix, as
    :func:`find_session`; duplicates once), or — with no keys — every session of
    ``lanes`` with a record captured at or after ``since_ns``. Oldest start first."""
    if keys:
        refs: dict[tuple[str, str], SessionRef] = {}
        for key in keys:
            ref = find_session(lanes, key)
            refs.setdefault((ref.root_sha, ref.session_id), ref)
        chosen = list(refs.values())
    else:
        chosen = []
        for lane in lanes:
            for sid, recs in sessions_of(lane).items():
                if max(r.captured_ns for r in recs) >= since_ns:
                    chosen.append(describe(lane, sid, recs))
    return sorted(chosen, key=lambda r: (r.started_at, r.session_id, r.root_sha))
