"""``abcd history ingest`` and ``abcd history migrate``: transcripts already on disk.

ingest (DESIGN §3.9, issue "ingest/watch/migrate"):
- Roots default to Claude Code's ``$CLAUDE_CONFIG_DIR/projects`` (else
  ``~/.claude/projects``); any directory laid out like a
  Claude Code project folder or the JSONL store harness's works. Roots and ``--into``
  are made absolute here: the daemon does not share our working directory.
- The daemon answers when it runs (progress streamed); otherwise the same core
  (:func:`abcd_daemon.ingest.ingest_request`) runs in-process. Either way the staged
  lanes are drained before the verb returns, unless ``--no-drain``; ``--dry-run``
  changes nothing and only reports.
- A progress bar (phase, files, bytes, ETA) is drawn on stderr only when stderr is a
  terminal; piped, nothing is drawn. The summary table ends the output; ``--json``
  prints the IngestReport instead.
- Exit 0 when nothing failed (unowned and skipped transcripts are reported, not
  failures), 1 when a stage or a drain failed, 2 for a malformed option.

migrate: a dry run by default; ``--apply`` moves the older
``ABCD_HOME/history/<sha>/{transcripts,staging}`` into lanes. Exit 1 when files were
left behind.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime
from ..progress import Bar

#: How many unowned / skipped transcripts the text summary names before "and N more".
_SHOWN = 20


def _request(roots: list[str], since: str, into: str, dry_run: bool, drain: bool):
    from abcd_daemon.ingest.harness_store import projects_root
    from abcd_daemon.wire import messages as m

    absolute = [os.path.abspath(os.path.expanduser(r)) for r in roots]
    for root in absolute:
        if not os.path.isdir(root):
            raise InputError(f"history ingest: {root} is not a directory",
                             hint="name a harness folder such as ~/.claude/projects")
    if since:
        from abcd_daemon.ingest import parse_since

        parse_since(since)  # refuse a bad date before asking anyone
    if not absolute:
        absolute = [projects_root()]  # ours, not the daemon's: its environment may differ
        if not os.path.isdir(absolute[0]):
            raise InputError(f"history ingest: {absolute[0]} does not exist, so there is nothing "
                             "to ingest by default", hint="name the folder that holds the transcripts")
    return m.IngestRequest(roots=absolute, since=since, dry_run=dry_run,
                           into=os.path.abspath(os.path.expanduser(into)) if into else "",
                           drain=drain)


def _via_daemon(req, bar):
    """The daemon's report, or None when no daemon answers."""
    import msgspec

    from abcd_daemon.ingest.report import IngestReport
    from abcd_daemon.wire import messages as m

    from ..connect import ask_with_progress

    reply = ask_with_progress(req, bar)
    if reply is None:
        return None
    if not isinstance(reply, m.IngestReply):
        raise AbcdError("the daemon ended the ingest without a report",
                        hint="check its log; rerun the command")
    return msgspec.json.decode(reply.report_json, type=IngestReport)


def _in_process(req, bar):
    from abcd_daemon.ingest import ingest_request
    from abcd_daemon.queue.scanners import ScannerPool

    cfg = runtime.config()
    return ingest_request(runtime.home(), req, config=cfg, scanners=ScannerPool(cfg), progress=bar)


def _repo_label(row) -> str:
    from abcd_daemon.queue.survey import lane_name
    from abcd_daemon.store.lane import Lane

    name = os.path.basename(row.repo_root) if row.repo_root else lane_name(Lane(runtime.home(), row.root_sha))
    return f"{row.root_sha[:12]}  {name or '(name unknown)'}"


def _skips(row) -> str:
    parts = [f"{n} {reason}" for reason, n in sorted(row.skipped.items())]
    if row.failed:
        parts.append(f"{row.failed} failed")
    return ", ".join(parts) or "-"


def render_ingest(report) -> None:
    verb = "would stage" if report.dry_run else "staged"
    roots = ", ".join(report.roots)
    output.say(f"abcd history ingest{' — DRY RUN, nothing was changed' if report.dry_run else ''}")
    output.say(f"read {report.files} transcript file(s), {output.human_bytes(report.bytes)}, under {roots}"
               + (f" (modified since {report.since}; {report.older} older left out)" if report.since else ""))
    rows = [(_repo_label(r), r.sessions, r.subagents, output.human_bytes(r.bytes), r.staged, r.present,
             _skips(r)) for r in report.repositories]
    if rows:
        headers = ("repository", "sessions", "sub-agents", "bytes", verb, "present", "skipped")
        widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
        for row in (headers, *rows):
            output.say("  ".join(str(c).ljust(w) if i == 0 or i == 6 else str(c).rjust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    else:
        output.say("no transcript belongs to a repository on this machine")
    output.say(f"total: {len(report.staged)} {verb}, {report.present} already present, "
               f"{report.empty} empty file(s) ignored")
    if report.unowned:
        output.say(f"UNOWNED — {len(report.unowned)} transcript(s) whose repository was not found "
                   "(listed, not guessed; `--into <checkout>` places them):")
        for item in report.unowned[:_SHOWN]:
            output.say(f"  {item.path}  {item.detail}")
        if len(report.unowned) > _SHOWN:
            output.say(f"  … and {len(report.unowned) - _SHOWN} more (`--json` lists them all)")
    if report.skipped:
        counts: dict[str, int] = {}
        for item in report.skipped:
            counts[item.reason] = counts.get(item.reason, 0) + 1
        output.say("skipped: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        for item in report.skipped[:_SHOWN]:
            output.say(f"  {item.path}  {item.reason}: {item.detail}")
        if len(report.skipped) > _SHOWN:
            output.say(f"  … and {len(report.skipped) - _SHOWN} more (`--json` lists them all)")
    for item in report.failed:
        output.say(f"FAILED to stage {item.path}: {item.detail}")
    for item in report.warnings:
        output.say(f"note: {item.path}: {item.detail}")
    if report.drain is not None:
        d = report.drain
        output.say(f"drained: {len(d.captured)} record(s) stored, {d.already_stored} already stored, "
                   f"{len(d.failed)} failed ({d.quarantined} quarantined)")
        for f in d.failed:
            output.say(f"  FAILED {f.session_id}{' agent ' + f.agent_id if f.agent_id else ''}: {f.error}")
    elif report.staged and not report.dry_run:
        output.say("the staged transcripts wait for the daemon's drain (or `abcd history drain` in "
                   "each repository)")


def render_migrate(report) -> None:
    if not report.lanes:
        output.say(f"abcd history migrate — no older corpus under {report.history_dir}; nothing to do")
        return
    for lane in report.lanes:
        head = f"{lane.root_sha[:12]}  {lane.legacy_dir}"
        if lane.already_moved:
            output.say(f"{head}: already moved (tombstone present)")
            continue
        if report.apply:
            output.say(f"{head}: moved {lane.moved} file(s), {lane.duplicates} already in place, "
                       f"{len(lane.left)} left" + ("; tombstone written" if lane.tombstoned else ""))
        else:
            movable = len(lane.items) - len(lane.left)
            output.say(f"{head}: would move {lane.records} record(s) and {lane.staged} staged file(s) "
                       f"({movable} movable, {len(lane.left)} would be left)")
        for item in lane.left:
            output.say(f"  LEFT {item.source}: {item.action} — {item.detail}")
    if not report.apply:
        output.say("dry run: nothing was moved; `abcd history migrate --apply` moves them")


def register(app, history, daemon) -> None:
    @history.command("ingest")
    def ingest_cmd(
        roots: Optional[List[str]] = typer.Argument(None, help="Harness folders to walk (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)."),
        since: str = typer.Option("", "--since", help="Only files modified at or after DATE (YYYY-MM-DD, UTC, or RFC 3339)."),
        into: str = typer.Option("", "--into", help="Store everything found in this checkout's lane (overrides ownership)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Read and report; change nothing."),
        no_drain: bool = typer.Option(False, "--no-drain", help="Stage only; leave redaction to the daemon's drain."),
        as_json: bool = typer.Option(False, "--json", help="Print the IngestReport as one JSON document."),
    ) -> None:
        """Recover transcripts already on disk into their repositories' corpora. Works anywhere."""
        bar = Bar(sys.stderr, phases=("reading", "staging", "draining")) if sys.stderr.isatty() else None
        try:
            req = _request(roots or [], since, into, dry_run, not no_drain)
            report = _via_daemon(req, bar)
            if report is None:
                report = _in_process(req, bar)
        except AbcdError as err:
            if bar is not None:
                bar.close()
            output.fail(err, as_json=as_json)
        if bar is not None:
            bar.close()
        if as_json:
            output.emit_json(report)
        else:
            render_ingest(report)
        if report.failed or (report.drain is not None and report.drain.failed):
            raise typer.Exit(1)

    @history.command("migrate")
    def migrate_cmd(
        apply: bool = typer.Option(False, "--apply", help="Move the files (default: report only)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Move the older ~/.abcd/history/<sha>/transcripts layout into lanes (dry run by default)."""
        from abcd_daemon.ingest.migrate import migrate

        try:
            report = migrate(runtime.home(), apply=apply, config=runtime.config(), now_ns=runtime.now_ns())
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json({**_builtins(report), "left_total": report.left})
        else:
            render_migrate(report)
        if apply and report.left:
            raise typer.Exit(1)


def _builtins(value) -> dict:
    import msgspec

    return msgspec.to_builtins(value)
