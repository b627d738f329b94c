"""Carrying out an ingest plan: stage each planned transcript.

Rules:
- Each transcript is copied again (guarded, block by block into a staging temp file,
  under ``max_transcript_bytes`` and ``max_line_bytes``) and staged as it is now, with
  ``source_path`` = the file and ``repo_root`` = the owning checkout; a file that grew
  since it was planned is staged grown (capture supersedes by prefix), and its
  settledness is judged again.
- Main threads are staged before sub-agents, and every entry gets its own stamp in plan
  order (``now_ns + position``), so the queue holds the spine first whatever order the
  writes finish in.
- Staging is bound by fsync latency, not CPU, so up to :data:`WORKERS` stages run at
  once (``stage`` is safe to call concurrently: one lock per key, and the plan holds
  each (lane, session, agent) once). Results are recorded on the calling thread.
- A main thread placed by its own cwd (or a store-harness file by its location) notes
  its session in the lane, as intake does: later sub-agents whose worktree is gone
  find the lane by the note. A note that cannot be written is not a failure.
- A refusal or disk failure is listed in ``failed`` with the reason; nothing raises.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from ..config import Config
from ..errors import AbcdError
from ..intake.copy import copy_once
from ..locate.notes import note_session
from ..paths import STAGING, Home
from ..queue.stage import StageResult, stage_file
from ..store.lane import Lane
from .plan import Action
from .report import IngestReport, Listed, Owned, StagedItem

#: Concurrent stages (I/O-bound: each waits on fsync).
WORKERS = 4
#: Placements that prove the session's lane; "lane" already is one, "into" is the
#: user's choice rather than a fact about the session.
_NOTE_VIA = ("cwd", "file-cwd", "file-location")


def owned_by(action: Action, *, present: bool) -> Owned:
    return Owned(root_sha=action.root_sha, repo_root=action.repo_root,
                 session_id=action.meta.session_id, agent_id=action.meta.agent_id,
                 bytes=action.size, present=present, path=action.path)


def staged_item(action: Action, *, name: str = "", size: int = 0, replaced: bool = False) -> StagedItem:
    return StagedItem(root_sha=action.root_sha, source_path=action.path,
                      session_id=action.meta.session_id, agent_id=action.meta.agent_id,
                      agent_type=action.meta.agent_type,
                      spawn_attribution=action.meta.spawn_attribution, via=action.via,
                      bytes=size or action.size, name=name, replaced=replaced)


def _stage_one(home: Home, action: Action, stamp: int, config: Config) -> tuple[StageResult, int] | str:
    """Stage one action: (result, bytes staged), or the failure's sentence. The file
    is copied block by block into staging under both caps (never held in memory) and
    the copy staged; the temp copy is removed unless staging took it."""
    lane = Lane(home, action.root_sha)
    try:
        lane.ensure(STAGING)
        tmp, size, settled = copy_once(action.path, lane.staging,
                                       max_bytes=config.max_transcript_bytes,
                                       line_cap=config.max_line_bytes, require_jsonl=False)
    except (AbcdError, OSError) as exc:
        return str(exc)
    try:
        settled = action.settled if size == action.size else settled
        result = stage_file(lane, tmp, size, action.meta, config=config, now_ns=stamp,
                            source_path=action.path, repo_root=action.repo_root,
                            unsettled=not settled)
    except (AbcdError, OSError) as exc:
        return str(exc)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return result, size


def execute(home: Home, actions: list[Action], report: IngestReport, owned: list[Owned], *,
            config: Config, now_ns: int, progress=None, workers: int | None = None) -> None:
    """Stage ``actions`` (already in plan order), recording each outcome in ``report``
    (``staged``, ``present``, ``failed``) and ``owned``."""
    total = sum(a.size for a in actions)
    done_files = done_bytes = 0
    noted: set[tuple[str, str]] = set()
    outcomes: list[tuple[int, Action, tuple[StageResult, int] | str]] = []
    if progress:
        progress(0, len(actions), 0, total)
    mains = [(i, a) for i, a in enumerate(actions) if not a.meta.agent_id]
    subs = [(i, a) for i, a in enumerate(actions) if a.meta.agent_id]
    with ThreadPoolExecutor(max_workers=max(1, workers or WORKERS)) as pool:
        for group in (mains, subs):  # the spine is on disk before any sub-agent
            futures = [(i, a, pool.submit(_stage_one, home, a, now_ns + i, config)) for i, a in group]
            for i, action, future in futures:
                outcomes.append((i, action, future.result()))
                done_files += 1
                done_bytes += action.size
                if progress:
                    progress(done_files, len(actions), done_bytes, total)
    for _, action, outcome in sorted(outcomes, key=lambda o: o[0]):
        if isinstance(outcome, str):
            report.failed.append(Listed(path=action.path, reason="stage-failed", detail=outcome,
                                        root_sha=action.root_sha, session_id=action.meta.session_id,
                                        agent_id=action.meta.agent_id))
            continue
        result, size = outcome
        if result.wrote:
            report.staged.append(staged_item(action, name=result.entry.name, size=size,
                                             replaced=result.replaced))
        else:
            report.present += 1
        owned.append(owned_by(action, present=not result.wrote))
        key = (action.root_sha, action.meta.session_id)
        if action.via in _NOTE_VIA and key not in noted:
            noted.add(key)
            try:
                note_session(Lane(home, action.root_sha), action.meta.session_id, now_ns=now_ns,
                             ttl_s=config.session_note_ttl_s)
            except (AbcdError, OSError):
                pass  # a note is a fallback for later transcripts, never a failure
