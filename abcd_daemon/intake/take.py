"""Taking one spooled payload, end to end: validate → resolve → read → stage → remove.

Outcomes (``IntakeOutcome.status``):
- ``staged`` / ``restaged`` / ``already-staged`` — the transcript is in the queue;
- ``noted`` — a session-start payload; its session note is written;
- ``live`` — a Stop / UserPromptSubmit marker: the session note is written and the
  outcome names the transcript for the daemon to follow (nothing is staged: the
  transcript is still being written); a marker over the cap is ``ignored`` — it names
  nothing, and the watch covers its session anyway;
- ``gap`` — a SubagentStop without ``agent_transcript_path``: the lane's gap marker is
  updated and nothing is staged (there is nothing to stage);
- ``failed`` — unusable (bad payload, unreadable transcript, no lane): moved to
  ``spool/failed/`` with the reason. Nothing is deleted;
- ``retry`` — a transient fault (lock contention, disk full): left in the spool.
The spooled file is removed only after its transcript is durably staged, so a kill at
any instant either leaves it to be taken again (staging is idempotent) or is done.
``transcript_path`` on a ``noted`` or ``live`` outcome is the session's transcript as the
payload names it: the daemon's watch follows it (and on SessionStart catches up on the
project's earlier sessions).
"""

from __future__ import annotations

import os
import time
from typing import Callable

import msgspec

from ..config import Config
from ..errors import AbcdError, InputError, ReadRefused, RetryableError, StorePathError
from ..fsio.atomic import fsync_dir
from ..locate.notes import note_gap
from ..paths import Home
from ..queue.stage import stage
from ..shim import EVENTS, LIVE_EVENTS
from ..store.meta import HOOK, CaptureMeta
from .harness import has_json_object_line, read_lineage, read_settled
from .payload import parse_payload
from .resolve import LaneResolver
from .spool import move_to_failed, read_item


class IntakeOutcome(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    status: str
    event: str = ""
    root_sha: str = ""
    session_id: str = ""
    agent_id: str = ""
    bytes: int = 0
    via: str = ""
    transcript_path: str = ""
    message: str = ""
    warnings: list[str] = []


def _done(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(os.path.dirname(path))


def take(home: Home, path: str, *, resolver: LaneResolver, config: Config, now_ns: int,
         sleep: Callable[[float], None] = time.sleep) -> IntakeOutcome:
    """Take the spooled payload at ``path``. Never raises for anything about the payload."""
    name = os.path.basename(path)
    out = IntakeOutcome(name=name, status="failed")

    def fail(reason: str) -> IntakeOutcome:
        out.message = reason
        try:
            move_to_failed(home, path, reason)
        except (OSError, AbcdError) as exc:
            out.status = "retry"
            out.message = f"{reason}; could not move it to spool/failed ({exc})"
        return out

    item = read_item(path)
    if item.error:
        if "does not exist" in item.error:
            out.status = "gone"
            return out
        return fail(item.error)
    header = item.header
    out.event = header.event
    if header.over_cap and header.event in LIVE_EVENTS:
        out.status, out.message = "ignored", "a liveness marker over the cap names no session"
        _done(path)
        return out
    if header.over_cap:
        return fail("the harness sent a payload over the 1 MiB cap; the shim kept a marker, not "
                    "the payload — run `abcd history ingest` to recover the transcript")
    if header.event not in EVENTS:
        return fail(f"unknown hook event {header.event!r}")
    try:
        payload = parse_payload(item.payload, require_agent=header.event == "subagent-stop")
    except InputError as exc:
        return fail(str(exc))
    out.session_id, out.agent_id, out.warnings = payload.session_id, payload.agent_id, payload.warnings
    res = resolver.resolve(payload.session_id, payload.cwd or header.cwd, now_ns=now_ns)
    out.via = res.via
    if res.lane is not None:
        out.root_sha = res.lane.root_sha
    if header.event == "session-start" or header.event in LIVE_EVENTS:
        out.status = "live" if header.event in LIVE_EVENTS else (
            "noted" if res.lane is not None else "unresolved")
        out.message = res.why_not
        out.transcript_path = payload.transcript_path
        _done(path)
        return out
    if header.event == "subagent-stop" and not payload.agent_transcript_path:
        if res.lane is not None:
            try:
                note_gap(res.lane, payload.hook_event_name or "SubagentStop", now_ns=now_ns)
            except (OSError, AbcdError) as exc:
                out.status, out.message = "retry", f"could not update the gap marker ({exc})"
                return out
        out.status = "gap"
        out.message = ("this harness fired SubagentStop with no agent_transcript_path, so no "
                       "sub-agent transcript can be captured here; `abcd history staged` reports this")
        _done(path)
        return out
    transcript = payload.agent_transcript_path if header.event == "subagent-stop" else payload.transcript_path
    if not transcript:
        return fail("the payload carries no transcript_path; capturing nothing")
    if res.lane is None:
        return fail(f"cannot resolve the repository for this transcript — {res.why_not}; "
                    "staging nothing")
    try:
        raw, settled = read_settled(transcript, timeout_s=config.settle_timeout_s,
                                    poll_s=config.settle_poll_s, sleep=sleep)
    except ReadRefused as exc:
        return fail(str(exc))
    if not has_json_object_line(raw):
        return fail(f"{transcript!r} is not a JSONL transcript (none of its lines is a JSON "
                    "object); nothing was staged")
    if not settled:
        out.warnings.append("the transcript's last line was still incomplete after waiting; "
                            "staged what is on disk, which may be short")
    if header.event == "subagent-stop":
        lineage = read_lineage(transcript)
        meta = CaptureMeta(
            session_id=payload.session_id,
            agent_id=payload.agent_id,
            agent_type=payload.agent_type or lineage.agent_type,
            parent_agent_id=lineage.parent_agent_id,
            spawn_depth=lineage.spawn_depth,
            spawn_tool_use_id=lineage.spawn_tool_use_id,
            lineage_source=HOOK,
            spawn_attribution=lineage.attribution,
        )
    else:
        meta = CaptureMeta(session_id=payload.session_id, lineage_source=HOOK)
    try:
        result = stage(res.lane, raw, meta, config=config, now_ns=now_ns, source_path=transcript,
                       repo_root=res.repo_root, unsettled=not settled)
    except InputError as exc:
        return fail(str(exc))
    except (RetryableError, StorePathError, OSError) as exc:
        out.status, out.message = "retry", f"staging failed ({exc}); will retry"
        return out
    out.bytes = len(raw)
    out.status = "already-staged" if not result.wrote else ("restaged" if result.replaced else "staged")
    _done(path)
    return out
