"""Deciding what an ingest run stages. Pure: values in, a plan out; nothing is read or
written here (ownership and the corpus come in as an index and a callable).

Per transcript, in order (the first rule that answers decides):

1. Empty → counted, not listed; an empty main file whose lane is known — a sub-agent of
   its session filed in this run, else the one lane that knows the session — is planned
   as an empty-main marker (so reconstruct says EMPTY, not ABSENT). No line names a
   session → ``not-a-transcript``.
2. Identity: a main thread's session is its file name (a resumed session may carry
   older sessions' lines); a sub-agent's agent id is its file name, and its lines may
   name no other agent (``ambiguous-agent-id``); an older-layout sub-agent's session is
   the one session its lines name (``ambiguous-session`` otherwise). A file in the
   main-thread place whose lines say it is a sub-agent's — ``isSidechain: true`` on
   every line that carries it, exactly one ``agentId`` and exactly one ``sessionId`` —
   is filed as that agent of that session, as its lines say, and a ``sidechain-file``
   warning names the file (a sidechain is never silently filed as a main thread).
3. Already present: a record of the same bytes for the same (session, agent), or a
   staged copy with identical bytes — in any lane, or only in the ``--into`` lane when
   one is given. (A transcript is in the corpus once; an identical record elsewhere was
   placed when it was stored.) A longer transcript than a stored one is new: capture
   supersedes by prefix.
4. Owner (see :mod:`.owner`): ambiguous → skipped; unowned → listed with the reason.
5. Lineage: what a hook payload said, when the store holds a staged entry or record
   of this (session, agent) staged from one (the transcript grew after the hook fired;
   the payload knew more than the file does). Otherwise ``lineage_source: ingest``; a
   sub-agent's ``agent_type`` from its ``.meta.json`` (else from its lines);
   ``spawn_attribution: sidecar`` only when the meta carries a spawn depth, else
   ``unattributed`` with no parent, depth or tool call.
6. Two files for one (lane, session, agent) in one run: identical bytes stage once;
   different bytes stage the largest, the others are ``same-key`` for a later run.

Actions are ordered main threads first, then sub-agents, each by path: a truncated
run still holds the spine that makes the rest legible.
"""

from __future__ import annotations

from typing import Callable

import msgspec

from ..errors import InputError
from ..ids import is_valid_id
from ..intake.harness import HarnessLineage
from ..store.meta import CaptureMeta
from .corpus import CorpusIndex
from .facts import Facts
from .layout import Found
from .owner import AMBIGUOUS, OWNED, Owner
from .report import IngestReport, Listed, Owned

NOT_A_CONVERSATION = ("no line names a session (a title-only or snapshot-only file, "
                      "not a conversation)")


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A transcript as read: where it was found, what its bytes say, and (sub-agents)
    what its harness meta sidecar says."""

    found: Found
    facts: Facts
    lineage: HarnessLineage | None = None


class Action(msgspec.Struct, frozen=True, kw_only=True):
    """Stage the file at ``path`` into lane ``root_sha`` with ``meta``."""

    path: str
    root_sha: str
    repo_root: str
    via: str
    meta: CaptureMeta
    size: int
    sha256: str
    settled: bool = True


class Plan(msgspec.Struct, kw_only=True):
    actions: list[Action]
    present: list[Owned]
    report: IngestReport
    #: (root_sha, session_id) of each empty main file whose lane is known: the caller
    #: writes the lane's empty-main marker (:mod:`~abcd_daemon.store.empty_mains`).
    empty_mains: list[tuple[str, str]] = []


def sidechain_identity(found: Found, facts: Facts) -> tuple[str, str] | None:
    """(session_id, agent_id) a main-place file's lines give it when they say it is a
    sub-agent's transcript (see the module docstring); None otherwise."""
    if not (found.is_main and facts.sidechain and len(facts.agent_ids) == 1
            and len(facts.session_ids) == 1):
        return None
    session, agent = facts.session_ids[0], facts.agent_ids[0]
    return (session, agent) if is_valid_id(session) and is_valid_id(agent) else None


def identify(found: Found, facts: Facts) -> tuple[str, str] | Listed:
    """(session_id, agent_id) of a transcript, or why it is not one."""
    if not facts.harness:
        return Listed(path=found.path, reason="not-a-transcript", detail=NOT_A_CONVERSATION)
    lines_say = sidechain_identity(found, facts)
    if lines_say is not None:
        return lines_say
    session = found.session_id
    if found.layout == "legacy-agent":
        named = facts.session_ids
        if len(named) != 1:
            return Listed(path=found.path, reason="ambiguous-session", agent_id=found.agent_id,
                          detail=f"its lines name {len(named)} sessions; a sub-agent belongs to one")
        session = named[0]
        if not is_valid_id(session):
            return Listed(path=found.path, reason="bad-id", agent_id=found.agent_id,
                          detail=f"session id {session[:80]!r} is not a usable id")
    if not found.is_main:
        others = [a for a in facts.agent_ids if a != found.agent_id]
        if others:
            return Listed(path=found.path, reason="ambiguous-agent-id", session_id=session,
                          agent_id=found.agent_id,
                          detail=f"its lines name agent {others[0][:80]!r} as well as its own")
    return session, found.agent_id


def capture_meta(session_id: str, agent_id: str, facts: Facts,
                 lineage: HarnessLineage | None,
                 inherited: CaptureMeta | None = None) -> tuple[CaptureMeta, str]:
    """The lineage to stage with, and a warning ("" when none). ``inherited``: the
    lineage a hook gave this transcript before (kept when it is still valid). Never
    raises."""
    if inherited is not None:
        try:
            return inherited.validate(), ""
        except InputError:
            pass  # redaction may have masked an id of a stored record: use the file's
    if not agent_id:
        return CaptureMeta(session_id=session_id, lineage_source="ingest"), ""
    lineage = lineage or HarnessLineage()
    fields = dict(session_id=session_id, agent_id=agent_id, lineage_source="ingest",
                  agent_type=lineage.agent_type or facts.agent_type)
    if lineage.attribution == "sidecar":
        fields.update(spawn_attribution="sidecar", parent_agent_id=lineage.parent_agent_id,
                      spawn_depth=lineage.spawn_depth, spawn_tool_use_id=lineage.spawn_tool_use_id)
    else:
        fields.update(spawn_attribution="unattributed")
    meta = CaptureMeta(**fields)
    try:
        return meta.validate(), ""
    except InputError as exc:  # only an agent type from the lines can be unusable here
        return msgspec.structs.replace(meta, agent_type=""), f"agent type dropped: {exc}"


def plan_ingest(candidates: list[Candidate], *, index: CorpusIndex,
                owner_of: Callable[[Candidate, str], Owner],
                into_lanes: tuple[str, ...] | None = None,
                report: IngestReport) -> Plan:
    """Decide every candidate (see module rules). ``owner_of(candidate, session_id)``
    answers the ownership ladder; ``into_lanes`` restricts "already present" to the
    ``--into`` lane. Fills ``report``'s counts and lists; returns the plan."""
    chosen: dict[tuple[str, str, str], list[Action]] = {}
    present: list[Owned] = []
    empty: list[str] = []
    for cand in candidates:
        found, facts = cand.found, cand.facts
        if facts.size == 0:
            report.empty += 1
            if found.is_main and is_valid_id(found.session_id):
                empty.append(found.session_id)
            continue
        who = identify(found, facts)
        if isinstance(who, Listed):
            report.skipped.append(who)
            continue
        session, agent = who
        if found.is_main and agent:
            report.warnings.append(Listed(
                path=found.path, reason="sidechain-file", session_id=session, agent_id=agent,
                detail=f"named like a main thread, but every line says it is sub-agent "
                       f"{agent} of session {session} (isSidechain: true): filed as that "
                       "agent, as its lines say"))
        lane = (index.recorded(session, agent, facts.sha256, into_lanes)
                or index.staged_identical(session, agent, facts.size, facts.sha256, into_lanes))
        if lane:
            present.append(Owned(root_sha=lane, repo_root="", session_id=session, agent_id=agent,
                                 bytes=facts.size, present=True, path=found.path))
            continue
        owner = owner_of(cand, session)
        if owner.status != OWNED:
            listed = Listed(path=found.path, session_id=session, agent_id=agent, detail=owner.reason,
                            reason="ambiguous-owner" if owner.status == AMBIGUOUS else "no-repository")
            (report.skipped if owner.status == AMBIGUOUS else report.unowned).append(listed)
            continue
        meta, warning = capture_meta(session, agent, facts, cand.lineage,
                                     index.hook_lineage(session, agent))
        if warning:
            report.warnings.append(Listed(path=found.path, reason="lineage", detail=warning,
                                          session_id=session, agent_id=agent))
        action = Action(path=found.path, root_sha=owner.root_sha, repo_root=owner.repo_root,
                        via=owner.via, meta=meta, size=facts.size, sha256=facts.sha256,
                        settled=facts.settled)
        chosen.setdefault((owner.root_sha, session, agent), []).append(action)
    actions = []
    for group in chosen.values():
        group.sort(key=lambda a: (-a.size, a.path))
        actions.append(group[0])
        for other in group[1:]:
            if other.sha256 == group[0].sha256:
                present.append(Owned(root_sha=other.root_sha, repo_root=other.repo_root,
                                     session_id=other.meta.session_id, agent_id=other.meta.agent_id,
                                     bytes=other.size, present=True, path=other.path))
            else:
                report.skipped.append(Listed(
                    path=other.path, reason="same-key", root_sha=other.root_sha,
                    session_id=other.meta.session_id, agent_id=other.meta.agent_id,
                    detail=f"{group[0].path} holds other bytes for the same session and agent "
                           "in this run; it is staged first, ingest again after the drain"))
    actions.sort(key=lambda a: (bool(a.meta.agent_id), a.path))
    report.present += len(present)
    return Plan(actions=actions, present=present, report=report,
                empty_mains=_empty_main_lanes(empty, actions, index))


def _empty_main_lanes(sessions: list[str], actions: list[Action],
                      index: CorpusIndex) -> list[tuple[str, str]]:
    """Where each empty main file's marker goes: the lane this run files its session's
    sub-agents in, else the one lane that already knows the session; none when two
    lanes could claim it (never guessed) or none does."""
    filed: dict[str, set[str]] = {}
    for a in actions:
        filed.setdefault(a.meta.session_id, set()).add(a.root_sha)
    out = []
    for session in dict.fromkeys(sessions):
        lanes = filed.get(session) or set(index.lanes_knowing(session))
        if len(lanes) == 1:
            out.append((next(iter(lanes)), session))
    return out
