"""``abcd daemon run | start | stop | status | install | uninstall`` and ``abcd hook``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import typer

from abcd_daemon.errors import AbcdError, DaemonUnavailable

from .. import output, runtime


def _status_lines(status) -> list[str]:
    lines = [
        f"abcd daemon {status.version} — running (pid {status.pid}, up {status.uptime_s:.0f}s)",
        f"  socket:      {status.socket}{' (socket-activated)' if status.socket_activated else ''}",
        f"  home:        {status.home}",
        f"  queue:       {status.staged} staged ({output.human_bytes(status.staged_bytes)}), "
        f"{status.overdue} overdue, {status.not_drainable} not drainable",
        f"  quarantined: {status.quarantined} ({output.human_bytes(status.quarantined_bytes)})",
        f"  spool:       {status.spool_pending} pending, {status.spool_failed} failed",
        f"  totals:      {status.intake_total} payload(s) taken, {status.stored_total} record(s) "
        f"stored in {status.passes} pass(es)",
    ]
    if status.last_pass is not None:
        p = status.last_pass
        lines.append(f"  last pass:   {p.finished_at} — {p.stored} stored, {p.failed} failed, "
                     f"{p.quarantined} quarantined, {p.remaining} left ({p.seconds:.2f}s)")
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


def _running():
    from ..connect import connect

    try:
        return connect(timeout=2.0)
    except DaemonUnavailable:
        return None


def register(app, history, daemon) -> None:
    @daemon.command("run")
    def run_cmd(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every payload and record."),
    ) -> None:
        """Run the daemon in the foreground (what the service unit runs). Stops on SIGTERM."""
        import logging

        import trio

        from abcd_daemon.server.app import run_daemon

        logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                            format="%(asctime)s abcd[%(process)d] %(levelname)s %(message)s")
        if not verbose:
            logging.getLogger("abcd.daemon").setLevel(logging.INFO)
        logging.getLogger("watchfiles").setLevel(logging.WARNING)  # one line per change
        try:
            trio.run(run_daemon, runtime.home(), runtime.config())
        except AbcdError as err:
            output.fail(err)

    @daemon.command("start")
    def start_cmd(
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Start the daemon in the background (when no service manager runs it) and wait
        until it answers."""
        home = runtime.home()
        client = _running()
        if client is not None:
            pid = client.welcome.pid
            client.close()
            result = {"started": False, "pid": pid, "message": "already running"}
        else:
            home.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            log_path = home.root / "daemon.log"
            log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            with os.fdopen(log_fd, "ab") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "abcd_client", "daemon", "run"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                    close_fds=True)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                client = _running()
                if client is not None:
                    client.close()
                    break
                if proc.poll() is not None:
                    output.fail(AbcdError(f"the daemon exited at start (status {proc.returncode})",
                                          hint=f"see {log_path}"), as_json=as_json)
                time.sleep(0.05)
            else:
                output.fail(AbcdError("the daemon did not answer within 15s", hint=f"see {log_path}"),
                            as_json=as_json)
            result = {"started": True, "pid": proc.pid, "log": str(log_path),
                      "socket": __import__("abcd_daemon.paths", fromlist=["x"]).socket_path()}
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
        client = _running()
        if client is None:
            if as_json:
                output.emit_json({"stopped": False, "message": "not running"})
            else:
                output.say("abcd daemon — not running")
            return
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
        quarantined, what it follows, harness transcripts not stored. Exits 3 when it is not running."""
        from abcd_daemon.wire import messages as m

        client = _running()
        if client is None:
            if as_json:
                output.emit_json({"running": False})
            else:
                output.say("abcd daemon — not running. Hook payloads are kept in the spool and "
                           "captured when it starts: `abcd daemon start` (or `abcd daemon install`).")
            raise typer.Exit(3)
        with client:
            try:
                status = client.request(m.StatusRequest()).status
            except AbcdError as err:
                output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json(dict(__import__("msgspec").to_builtins(status), running=True))
        else:
            for line in _status_lines(status):
                output.say(line)

    @daemon.command("install")
    def install_cmd(
        no_enable: bool = typer.Option(False, "--no-enable", help="Write the unit files only."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Write the systemd user units (or launchd agent) for this user and enable the socket."""
        from ..service import install

        try:
            steps = install(enable=not no_enable)
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
    def hook_cmd(ctx: typer.Context, event: str = typer.Argument("", help="The hook event.")) -> None:
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
