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
- ``empty`` — a SessionEnd whose main transcript is zero bytes: the lane's empty-main
  marker is written (:mod:`~abcd_daemon.store.empty_mains`) and nothing is staged;
- ``dropped`` — a payload of an event abcd does not handle (the shim spools whatever it
  is wired to): removed, counted in the daemon's status, never "failed";
- ``failed`` — unusable (bad payload, unreadable transcript, no lane): moved to
  ``spool/failed/`` with the reason. Nothing is deleted;
- ``retry`` — a transient fault (lock contention, disk full), or its spool was refused
  since it was listed: left where it is.
The spooled file is removed only after its transcript is durably staged, so a kill at
any instant either leaves it to be taken again (staging is idempotent) or is done. The
entry is read, moved and removed through its spool's verified ``new/`` descriptor
(:func:`.spool.opened_new`), held for the whole take.

A payload's transcript path must name a regular file owned by this uid; a relative one
is resolved against the payload's ``cwd`` (never the daemon's own working directory).
A ``cut_short`` header (the shim's stdin deadline passed) is used when what arrived is a
complete payload, and refused with a reason when it is not.

Every message (the ``.reason`` beside a failed payload, the log line) goes through the
payload's :class:`~.reasons.Scrubber`: it names fields, never quotes their values.
any instant either leaves it to be taken again (staging is idempotent) or is done.
``transcript_path`` on a ``noted`` or ``live`` outcome is the session's transcript as the
payload names it: the daemon's watch follows it (and on SessionStart catches up on the
project's earlier sessions).
"""

from __future__ import annotations

import os
import time
from typing import Callable


from ..config import Config
from ..errors import AbcdError, InputError, ReadRefused, RetryableError, StorePathError
from ..limits import STDIN_DEADLINE_S
from ..locate.notes import note_gap
from ..paths import STAGING, Home
from ..queue.stage import stage_file
from ..shim import EVENTS, LIVE_EVENTS
from ..store.chunks import OverCap
from ..store.empty_mains import note_empty_main
from ..store.meta import HOOK, CaptureMeta
from .copy import copy_settled
from .harness import read_lineage
from .outcome import IntakeOutcome
from .payload import parse_payload
from .reasons import Scrubber, describe
from .resolve import LaneResolver
from .spool import move_to_failed, opened_new, read_item, remove_entry, spool_of


def transcript_location(path: str, cwd: str) -> str:
    """The absolute path a payload's transcript path names: as it is when absolute, else
    against the payload's ``cwd``. Raises InputError when a relative path has no
    absolute cwd to be resolved against."""
    if os.path.isabs(path):
        return path
    if not os.path.isabs(cwd):
        raise InputError(f"the transcript path {path!r} is relative and the payload carries no "
                         "absolute cwd to resolve it against; capturing nothing")
    return os.path.normpath(os.path.join(cwd, path))


def take(home: Home, path: str, *, resolver: LaneResolver, config: Config, now_ns: int,
         sleep: Callable[[float], None] = time.sleep) -> IntakeOutcome:
    """Take the spooled payload at ``path`` (``<spool>/new/<name>``). Never raises for
    anything about the payload or its spool."""
    try:
        with opened_new(spool_of(path)) as new_fd:
            return _take(home, new_fd, path, resolver=resolver, config=config, now_ns=now_ns,
                         sleep=sleep)
    except FileNotFoundError:
        return IntakeOutcome(name=os.path.basename(path), status="gone")
    except OSError as exc:  # safedir.Refused: the spool changed since it was listed
        return IntakeOutcome(name=os.path.basename(path), status="retry",
                             message=f"not taken: {exc}")


def _take(home: Home, new_fd: int, path: str, *, resolver: LaneResolver, config: Config,
          now_ns: int, sleep: Callable[[float], None]) -> IntakeOutcome:
    item = read_item(new_fd, path)
    header = item.header
    scrub = Scrubber.of_payload(item.payload, {} if header is None else {
        header.event: describe("the hook's event argument", header.event),
        header.cwd: describe("the hook's working directory", header.cwd)})
    out = _take_item(home, new_fd, path, item, resolver=resolver, config=config,
                     now_ns=now_ns, sleep=sleep, scrub=scrub)
    out.message = scrub(out.message)
    out.warnings = [scrub(w) for w in out.warnings]
    return out


def _take_item(home: Home, new_fd: int, path: str, item, *, resolver: LaneResolver,
               config: Config, now_ns: int, sleep: Callable[[float], None],
               scrub: Scrubber) -> IntakeOutcome:
    out = IntakeOutcome(name=os.path.basename(path), status="failed")

    def fail(reason: str) -> IntakeOutcome:
        reason = scrub(reason)
        out.message = reason
        try:
            move_to_failed(home, new_fd, path, reason)
        except (OSError, AbcdError) as exc:
            out.status = "retry"
            out.message = f"{reason}; could not move it to spool/failed ({exc})"
        return out

    def done() -> None:
        remove_entry(new_fd, path)

    if item.missing:
        out.status = "gone"
        return out
    if item.error:
        return fail(item.error)
    header = item.header
    if header.event not in EVENTS:
        out.status = "dropped"
        out.message = (f"abcd does not handle this hook event "
                       f"({describe('the event', header.event)}); dropped")
        done()
        return out
    out.event = header.event
    if header.over_cap and header.event in LIVE_EVENTS:
        out.status, out.message = "ignored", "a liveness marker over the cap names no session"
        done()
        return out
    if header.over_cap:
        return fail("the harness sent a payload over the 1 MiB cap; the shim kept a marker, not "
                    "the payload — run `abcd history ingest` to recover the transcript")
    try:
        payload = parse_payload(item.payload, require_agent=header.event == "subagent-stop")
    except InputError as exc:
        if header.cut_short:
            return fail(f"the hook's stdin was still open {STDIN_DEADLINE_S:g}s after it started, "
                        f"and the {len(item.payload)} byte(s) that had arrived are not a whole "
                        f"payload ({exc}); the harness never finished sending it")
        return fail(str(exc))
    if header.cut_short:
        payload.warnings.append("the hook's stdin was still open at its deadline; the payload "
                                "that had arrived was whole and is used")
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
        done()
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
        done()
        return out
    transcript = payload.agent_transcript_path if header.event == "subagent-stop" else payload.transcript_path
    if not transcript:
        return fail("the payload carries no transcript_path; capturing nothing")
    if res.lane is None:
        return fail(f"cannot resolve the repository for this transcript — {res.why_not}; "
                    "staging nothing")
    try:
        transcript = transcript_location(transcript, payload.cwd or header.cwd)
    except InputError as exc:
        return fail(str(exc))
    try:
        res.lane.ensure(STAGING)
        tmp, size, settled = copy_settled(
            transcript, res.lane.staging, max_bytes=config.max_transcript_bytes,
            line_cap=config.max_line_bytes, timeout_s=config.settle_timeout_s,
            poll_s=config.settle_poll_s, sleep=sleep)
    except (ReadRefused, OverCap, InputError) as exc:
        if (isinstance(exc, ReadRefused) and exc.reason == "empty"
                and header.event == "session-end"):
            return _empty_main(out, res.lane, payload.session_id, now_ns=now_ns, done=done)
        return fail(str(exc))
    except (RetryableError, StorePathError, OSError) as exc:
        out.status, out.message = "retry", f"staging failed ({exc}); will retry"
        return out
    try:
        return _stage_copy(out, tmp, size, settled, header, payload, res, transcript,
                           config=config, now_ns=now_ns, fail=fail, done=done)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _stage_copy(out, tmp: str, size: int, settled: bool, header, payload, res, transcript: str,
                *, config: Config, now_ns: int, fail, done) -> IntakeOutcome:
    """Stage the settled copy ``tmp`` (removed by the caller if staging left it)."""
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
        result = stage_file(res.lane, tmp, size, meta, config=config, now_ns=now_ns,
                            source_path=transcript, repo_root=res.repo_root,
                            unsettled=not settled)
    except InputError as exc:
        return fail(str(exc))
    except (RetryableError, StorePathError, OSError) as exc:
        out.status, out.message = "retry", f"staging failed ({exc}); will retry"
        return out
    out.bytes = size
    out.status = "already-staged" if not result.wrote else ("restaged" if result.replaced else "staged")
    done()
    return out


def _empty_main(out: IntakeOutcome, lane, session_id: str, *, now_ns: int,
                done: Callable[[], None]) -> IntakeOutcome:
    """A SessionEnd whose main transcript is zero bytes: nothing to stage, and not a
    failure (there is nothing the user could fix). The lane is told, so reconstruct
    says the main thread was EMPTY rather than ABSENT; the payload is removed."""
    try:
        note_empty_main(lane, session_id, now_ns=now_ns)
    except (OSError, AbcdError) as exc:
        out.status, out.message = "retry", f"could not record the empty main thread ({exc})"
        return out
    out.status = "empty"
    out.message = ("the session's main transcript is empty (zero bytes): nothing to stage; "
                   "reconstruct reports its main thread as EMPTY")
    done()
    return out
