"""``abcd daemon run | start | stop | status | install | uninstall`` and ``abcd hook``.

:func:`status` is the body of ``daemon status``, called by the typer command and by the
typer-free fast path (:mod:`abcd_client.quick`) alike; this module imports typer only
to register the commands.
"""

from __future__ import annotations

import os

from abcd_daemon.errors import AbcdError

from .. import output, runtime


def _status_lines(status) -> list[str]:
    lines = [
        f"abcd daemon {status.version} — running (pid {status.pid}, up {status.uptime_s:.0f}s)",
        f"  socket:      {status.socket}{' (socket-activated)' if status.socket_activated else ''}",
        f"  home:        {status.home}",
        f"  queue:       {status.staged} staged ({output.human_bytes(status.staged_bytes)}), "
        f"{status.overdue} overdue, {status.not_drainable} not drainable",
        f"  quarantined: {status.quarantined} ({output.human_bytes(status.quarantined_bytes)})",
        f"  spool:       {status.spool_pending} pending, {status.spool_failed} failed "
        f"({output.human_bytes(status.spool_failed_bytes)} unredacted; `abcd history staged`), "
        f"{status.events_dropped} payload(s) of unhandled events dropped",
        f"  totals:      {status.intake_total} payload(s) taken, {status.stored_total} record(s) "
        f"stored in {status.passes} pass(es)",
    ]
    if status.scanner:
        stale = (f", {status.stale_records} record(s) redacted by an older one — "
                 "`abcd history rescan --all-repos`") if status.stale_records else ""
        lines.append(f"  scanner:     {status.scanner}{stale}")
    if status.last_pass is not None:
        p = status.last_pass
        lines.append(f"  last pass:   {p.finished_at} — {p.stored} stored, {p.failed} failed, "
                     f"{p.quarantined} quarantined, {p.remaining} left ({p.seconds:.2f}s)")
    for refused in status.refused_spools:
        lines.append(f"  refused:     {refused.reason} — never swept")
    if status.last_error:
        lines.append(f"  last error:  {status.last_error}")
    if status.harness_store is not None:
        lines.append(f"  harness:     {_root_line(status.harness_store)}")
    else:
        lines.append("  harness:     not followed (config.toml watch_harness_store = false)")
    for root in status.watch_roots:
        lines.append(f"  watching:    {_root_line(root)}")
    if status.followed_sessions:
        lines.append(f"  following:   {status.followed_sessions} session(s) outside those roots, "
                     "named by hooks")
    missing = status.missing
    if missing is not None:
        if missing.total:
            reasons = ", ".join(f"{n} {r}" for r, n in missing.reasons.items())
            soonest = ("" if missing.soonest_days_left is None
                       else f"; the first is deleted by the harness in {missing.soonest_days_left} day(s)")
            lines.append(f"  missing:     {missing.total} harness transcript(s) not stored ({reasons})"
                         f"{soonest} — `abcd history missing --all-repos`")
        else:
            lines.append("  missing:     none — every harness transcript is stored or queued")
    return lines


def _root_line(root) -> str:
    line = f"{root.path} — {root.state}, {root.staged} staged"
    if root.caught_up_at:
        line += f", caught up in {root.catch_up_s:.2f}s at start"
    return line + (f", {root.last_error}" if root.last_error else "")


def _running(as_json: bool = False):
    """This store's daemon, or None when none answers. A daemon that is busy, or that
    serves another store on this socket, is refused with the reason (exit 1)."""
    from ..connect import running  # here: a help screen never loads the wire codec

    try:
        return running(runtime.home())
    except AbcdError as err:
        output.fail(err, as_json=as_json)


def status(*, as_json: bool = False) -> None:
    """``abcd daemon status``: what the running daemon reports, and every failed hook
    payload with its reason; exits 1 (``SystemExit``) when no daemon runs."""
    from abcd_daemon.wire import messages as m

    client = _running(as_json)
    if client is None:
        if as_json:
            output.emit_json({"running": False})
        else:
            output.say("abcd daemon — not running. Hook payloads are kept in the spool and "
                       "captured when it starts: `abcd daemon start` (or `abcd daemon install`).")
        raise SystemExit(1)
    with client:
        try:
            reply = client.request(m.StatusRequest()).status
            # spool/failed is listed, each with its reason, not only counted
            failed = (client.request(m.StagedRequest(all_repos=True)).failed
                      if reply.spool_failed else [])
        except AbcdError as err:
            output.fail(err, as_json=as_json)
    if as_json:
        import msgspec

        output.emit_json(dict(msgspec.to_builtins(reply), running=True, failed=failed))
    else:
        for line in _status_lines(reply):
            output.say(line)
        for f in failed:
            output.say(f"  failed:      {f.id}  {f.event or 'unknown event'}  "
                       f"{f.reason or f.error or '(no reason recorded)'}")


def register(app, history, daemon) -> None:
    import typer

    @daemon.command("run")
    def run_cmd(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every payload and record."),
        log_file: str = typer.Option("", "--log-file", metavar="FILE", help="Log to FILE (rotated, owner-only) instead of stderr or the journal."),
    ) -> None:
        """Run the daemon in the foreground (what the service unit runs). Stops on SIGTERM."""
        import trio

        from abcd_daemon.server.app import run_daemon
        from abcd_daemon.server.logs import configure
        from abcd_daemon.server.preflight import preflight

        try:
            home = runtime.home()
            config = preflight(home)
            configure(verbose=verbose, log_file=log_file, config=config, env=os.environ)
            trio.run(run_daemon, home, config)
        except AbcdError as err:
            output.fail(err)
        except OSError as exc:
            output.fail(AbcdError(f"the daemon could not start: {exc}"))

    @daemon.command("start")
    def start_cmd(
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Start the daemon in the background (when no service manager runs it) and wait
        until it answers. A configuration it cannot run with is refused here, with the
        reason."""
        from ..launch import start_background

        try:
            result = start_background(runtime.home())
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        except OSError as exc:
            output.fail(AbcdError(f"could not start the daemon: {exc}"), as_json=as_json)
        if as_json:
            output.emit_json(result)
        elif result["started"]:
            output.say(f"abcd daemon started (pid {result['pid']}); socket {result['socket']}; "
                       f"log {result['log']}")
        else:
            output.say(f"abcd daemon already running (pid {result['pid']})")

    @daemon.command("stop")
    def stop_cmd(
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Stop a running daemon (SIGTERM: it finishes the current item, then exits)."""
        client = _running(as_json)
        if client is None:
            if as_json:
                output.emit_json({"stopped": False, "message": "not running"})
            else:
                output.say("abcd daemon — not running")
            return
        import signal
        import time

        pid = client.welcome.pid
        client.close()
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and _running_pid(pid):
            time.sleep(0.05)
        if as_json:
            output.emit_json({"stopped": True, "pid": pid})
        else:
            output.say(f"abcd daemon stopped (pid {pid})")

    @daemon.command("status")
    def status_cmd(
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Show whether the daemon runs: version, uptime, queue depth, last pass, overdue,
        quarantined, failed hook payloads (each with its reason), what it follows, harness
        transcripts not stored. Exits 1 when it is not running."""
        status(as_json=as_json)

    @daemon.command("install")
    def install_cmd(
        no_enable: bool = typer.Option(False, "--no-enable", help="Write the unit files only."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Write the systemd user units (or launchd agent) for this user, carrying this
        shell's ABCD_HOME, ABCD_SOCKET and PATH, and enable the socket. Exits 1 with the
        service manager's error when it refuses."""
        from ..service import InstallFailed, install

        try:
            steps = install(enable=not no_enable)
        except InstallFailed as err:
            for step in err.steps:
                output.note(f"abcd daemon install — {step}")
            output.fail(err, as_json=as_json)
        except (AbcdError, OSError) as err:
            output.fail(err if isinstance(err, AbcdError) else AbcdError(str(err)), as_json=as_json)
        if as_json:
            output.emit_json({"steps": steps})
        else:
            for step in steps:
                output.say(f"abcd daemon install — {step}")

    @daemon.command("uninstall")
    def uninstall_cmd(
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Stop and disable the service and remove its unit files (the corpus is kept)."""
        from ..service import uninstall

        steps = uninstall()
        if as_json:
            output.emit_json({"steps": steps})
        else:
            for step in steps:
                output.say(f"abcd daemon uninstall — {step}")

    @app.command("hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                 help="Hand a harness hook payload (stdin) to the daemon; always exits 0. "
                      "Events: subagent-stop, session-end, session-start, stop, user-prompt-submit "
                      "(the last two spool only a 'this session is live' marker).")
    def hook_cmd(event: str = typer.Argument("", help="The hook event.")) -> None:
        from abcd_daemon import shim

        raise typer.Exit(shim.main(["abcd hook", event]))


def _running_pid(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
