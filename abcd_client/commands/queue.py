"""``abcd history staged | drain | discard``: the staging queue of this repository, and
the store-wide failed hook payloads beside it (:mod:`.failed`).

:func:`staged` is the body of ``history staged``, called by the typer command and by
the typer-free fast path (:mod:`abcd_client.quick`) alike; this module imports typer
only to register the commands.
"""

from __future__ import annotations

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime
from .failed import render_failed

TTL_TEXT = "168h0m0s"


def _who(entry) -> str:
    who = entry.session_id or "(unknown session)"
    if entry.agent_id:
        who += f" agent {entry.agent_id} ({entry.agent_type or 'type unknown'})"
    return who


def _day(stamp: str) -> str:
    return stamp[:10] if stamp else "-"


def render_staged(staged, quarantined, gap, failed=()) -> None:
    if not staged and not quarantined and gap is None and not failed:
        output.say("abcd history — nothing staged; every ended session is stored")
        return
    for e in staged:
        if e.error:
            state = f"NOT DRAINABLE: {e.error}"
        elif e.overdue:
            state = f"OVERDUE (staged more than {TTL_TEXT} ago), awaiting redaction"
        else:
            state = "awaiting redaction"
        output.say(f"{e.staged_at[:19]}Z  {_who(e)}  {e.bytes} bytes  {state}  [{e.name}]")
    if staged:
        output.say(f"{len(staged)} staged transcript(s) hold UNREDACTED text until drained; "
                   "run `abcd history drain`.")
    if quarantined:
        output.say("QUARANTINED — these can never be redacted; nothing will retry them:")
        for q in quarantined:
            output.say(f"{q.quarantined_at[:19]}Z  {_who(q)}  {q.bytes} bytes  {q.name}")
            output.say(f"    {q.reason or q.error}")
        total = sum(q.bytes for q in quarantined)
        output.say(f"{len(quarantined)} quarantined transcript(s) hold {total} bytes of UNREDACTED "
                   "text indefinitely. Read one, then remove it deliberately with "
                   "`abcd history discard <file> --yes`.")
    if gap is not None:
        output.say(f"NOTE: this harness fired SubagentStop {gap.count} time(s) without an "
                   f"agent_transcript_path (first {gap.first_seen}). No sub-agent transcript can "
                   "be captured on it, so an empty sub-agent corpus here is the harness, not the "
                   "sessions.")
    render_failed(failed)


def render_survey(backlog, failed=()) -> None:
    if not backlog:
        if not failed:
            output.say("abcd history — no repository in this store is holding unredacted transcript text")
        render_failed(failed, summary_only=True)
        return
    total = 0
    for b in backlog:
        line = f"{b.root_sha[:12]}  {b.name or '(unregistered)'}  {b.staged} staged ({output.human_bytes(b.staged_bytes)})"
        if b.overdue:
            line += f"  {b.overdue} OVERDUE"
        if b.quarantined:
            line += f"  {b.quarantined} quarantined ({output.human_bytes(b.quarantined_bytes)})"
        if b.oldest_staged_at:
            line += f"  oldest {_day(b.oldest_staged_at)}"
        if b.gap_count:
            line += f"  {b.gap_count} SubagentStop payload(s) without a transcript path"
        output.say(line)
        total += b.staged_bytes + b.quarantined_bytes
    output.say(f"{len(backlog)} repositor{'y' if len(backlog) == 1 else 'ies'} hold "
               f"{output.human_bytes(total)} of UNREDACTED transcript text.")
    if any(b.overdue for b in backlog):
        output.say(f"Entries past the {TTL_TEXT} staging limit are drained first; "
                   "`abcd history drain` in that repository finishes now.")
    if any(b.quarantined for b in backlog):
        output.say("Quarantined entries can never be redacted; inspect them, then "
                   "`abcd history discard <file> --yes`.")
    render_failed(failed, summary_only=True)


def render_drain(result) -> None:
    if not result.captured and not result.failed and not result.already_stored:
        output.say("abcd history — nothing staged; nothing to drain")
    for rec in result.captured:
        who = rec.session_id + (f" agent {rec.agent_id}" if rec.agent_id else "")
        output.say(f"stored  {who}  redacted secrets={rec.redacted_secrets} home={rec.redacted_home_paths}")
    if result.already_stored:
        output.say(f"{result.already_stored} staged transcript(s) were already stored; their staged copies are removed")
    for f in result.failed:
        who = f.session_id + (f" agent {f.agent_id}" if f.agent_id else "")
        output.say(f"FAILED  {who}  {f.error}")
        if f.quarantined:
            output.say(f"  quarantined (unredacted, owner-only): {f.quarantine_path}")
        else:
            output.say(f"  raw transcript kept (unredacted): {f.path}")
    if result.extended:
        output.say(f"{result.extended} transcript(s) had grown since staging; the longer copy was stored")
    if result.remaining:
        output.say(f"{result.remaining} staged transcript(s) remain beyond this pass's budget; "
                   "run `abcd history drain` again")


def staged(*, all_repos: bool = False, as_json: bool = False) -> None:
    """``abcd history staged``: this repository's staged and quarantined transcripts, its
    payload gap and the store's failed hook payloads; with ``all_repos`` the survey of
    every repository (read-only)."""
    from abcd_daemon.wire.messages import StagedRequest

    from ..connect import ask

    def ttl() -> float:  # the daemon has its own; only an in-process listing reads it
        return runtime.config().staged_ttl_s

    try:
        if all_repos:
            reply = ask(StagedRequest(all_repos=True))
            if reply is not None:
                backlog, failed = reply.backlog, reply.failed
            else:
                from abcd_daemon.intake.failed import list_failed
                from abcd_daemon.queue.survey import survey_backlog

                backlog = survey_backlog(runtime.home(), now_ns=runtime.now_ns(), ttl_s=ttl())
                failed = list_failed(runtime.home())
            if as_json:  # an array of lane backlogs, as the Go CLI printed; failed
                output.emit_json(backlog)  # payloads are in `staged --json` and status
            else:
                render_survey(backlog, failed)
            return
        lane = runtime.lane()
        reply = ask(StagedRequest(root_sha=lane.root_sha))
        if reply is not None:
            entries, quarantined, gap = reply.staged, reply.quarantined, reply.gap
            failed = reply.failed
        else:
            from abcd_daemon.intake.failed import list_failed
            from abcd_daemon.locate.notes import read_gap
            from abcd_daemon.queue.staged import list_quarantined, list_staged

            entries = list_staged(lane, now_ns=runtime.now_ns(), ttl_s=ttl())
            quarantined = list_quarantined(lane)
            gap = read_gap(lane)
            failed = list_failed(runtime.home())
    except AbcdError as err:
        output.fail(err, as_json=as_json)
    if as_json:
        output.emit_json({"staged": entries, "quarantined": quarantined, "gap": gap,
                          "failed": failed})
    else:
        render_staged(entries, quarantined, gap, failed)


def register(app, history, daemon) -> None:
    import typer

    @history.command("staged")
    def staged_cmd(
        all_repos: bool = typer.Option(False, "--all-repos", help="Survey every repository in the store (counts and sizes only; works anywhere)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """List transcripts waiting for redaction (and quarantined ones). Read-only."""
        staged(all_repos=all_repos, as_json=as_json)

    @history.command("drain")
    def drain_cmd(
        max_bytes: int = typer.Option(0, "--max-bytes", help="Stop after this many bytes (0 = unbounded; the first entry is always attempted)."),
        max_count: int = typer.Option(0, "--max-count", help="Stop after this many entries (0 = unbounded)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Redact and store this repository's staged transcripts now. Exits 1 if any failed."""
        from abcd_daemon.config import DrainBudget
        from abcd_daemon.queue.drain import drain_pass
        from abcd_daemon.queue.scanners import ScannerPool

        try:
            if max_bytes < 0 or max_count < 0:
                raise InputError("--max-bytes and --max-count must be >= 0 (0 = unbounded)")
            import sys

            from abcd_daemon.wire.messages import DrainRequest

            from ..connect import ask_with_progress
            from ..progress import Bar

            lane = runtime.lane()
            bar = Bar(sys.stderr, phases=("draining",)) if sys.stderr.isatty() and not as_json else None
            try:
                budget = DrainBudget(max_bytes=max_bytes, max_count=max_count)
                reply = ask_with_progress(DrainRequest(root_sha=lane.root_sha, max_bytes=max_bytes,
                                                       max_count=max_count), bar)
                if reply is not None:
                    result = reply.result
                else:
                    cfg = runtime.config()
                    result = drain_pass([lane], budget, scanners=ScannerPool(cfg), config=cfg,
                                        progress=bar)
            finally:
                if bar is not None:
                    bar.close()
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json(result)
        else:
            render_drain(result)
        if result.failed:
            if not as_json:
                output.note(f"abcd: {len(result.failed)} staged transcript(s) could not be stored")
            raise typer.Exit(1)

    @history.command("discard")
    def discard_cmd(
        entry: str = typer.Argument(..., help="A staged or quarantined entry's file name, or a failed hook payload's id (see `abcd history staged`)."),
        yes: bool = typer.Option(False, "--yes", help="Confirm: delete the only copy of an unredacted transcript."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Delete one staged or quarantined transcript and its metadata, or one failed hook
        payload and its reason, irreversibly. A failed payload is store-wide: discarding
        one works anywhere."""
        from abcd_daemon.intake.failed import discard_failed, looks_like_failed_name
        from abcd_daemon.queue.discard import check_entry_name, discard
        from abcd_daemon.wire.messages import DiscardFailedRequest, DiscardRequest

        from ..connect import ask

        try:
            failed = looks_like_failed_name(entry)
            if not failed:
                check_entry_name(entry)
            if not yes:
                raise InputError(
                    f"{entry} holds the only copy of an unredacted "
                    f"{'hook payload' if failed else 'transcript'} and deleting it is "
                    "irreversible; pass --yes to confirm",
                )
            if failed:
                reply = ask(DiscardFailedRequest(key=entry))
                result = reply.result if reply is not None else discard_failed(runtime.home(), entry)
            else:
                lane = runtime.lane()
                reply = ask(DiscardRequest(root_sha=lane.root_sha, name=entry))
                result = reply.result if reply is not None else discard(
                    lane, entry, config=runtime.config(), now_ns=runtime.now_ns())
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json(result)
            return
        what = "hook payload" if failed else "transcript"
        output.say(f"abcd history discard — deleted {result.bytes} bytes of unredacted {what}, unrecoverably")
        for path in result.removed:
            output.say(f"  removed: {path}")
