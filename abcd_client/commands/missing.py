"""``abcd history missing``: harness transcripts not stored yet, why, and how long the
harness keeps them.

- Without ``--all-repos``: the transcripts of the current repository (refused outside a
  git checkout); the ones of other repositories, or of none, are counted in one line
  that says how to see them. With it: every transcript, from anywhere.
- The daemon answers when it runs (it knows which files its watch is waiting on);
  otherwise the same survey (:func:`abcd_daemon.ingest.missing.survey_missing`) runs
  in-process over the harness store and ``watch_roots``, reading the harness ledger.
- Read-only. Exit 0 whatever is missing (the listing is the answer); ``--json`` prints
  the MissingReport.
"""

from __future__ import annotations

import typer

from abcd_daemon.errors import AbcdError

from .. import output, runtime

#: How many items the text output shows before "and N more".
_SHOWN = 50


def _survey():
    from abcd_daemon.ingest.harness_store import coverage_roots
    from abcd_daemon.ingest.ledger import Ledger
    from abcd_daemon.ingest.missing import survey_missing

    cfg = runtime.config()
    ledger = Ledger.load(runtime.home())
    return survey_missing(runtime.home(), coverage_roots(cfg), config=cfg, now_ns=runtime.now_ns(),
                          ledger=ledger, followed=ledger.followed())


def _who(item) -> str:
    who = item.session_id or "(session unknown)"
    return who + (f" agent {item.agent_id}" if item.agent_id else "")


def render_missing(report, *, elsewhere: int, scope: str) -> None:
    roots = ", ".join(report.roots)
    if not report.items:
        output.say(f"abcd history missing — every harness transcript{scope} is stored "
                   f"({report.stored} of {report.checked} checked under {roots})")
    else:
        output.say(f"abcd history missing — {len(report.items)} harness transcript(s){scope} not "
                   f"stored ({report.checked} checked under {roots})")
        for item in report.items[:_SHOWN]:
            days = "?" if item.days_left is None else str(item.days_left)
            output.say(f"  {days:>4} day(s) left  {item.reason:<13}  {_who(item)}  "
                       f"{output.human_bytes(item.bytes)}  {item.path}")
            if item.detail:
                output.say(f"        {item.detail}")
        if len(report.items) > _SHOWN:
            output.say(f"  … and {len(report.items) - _SHOWN} more (`--json` lists them all)")
        counts = ", ".join(f"{n} {reason}" for reason, n in report.counts().items())
        output.say(f"by reason: {counts}. Days left: before the harness's retention "
                   "(cleanupPeriodDays in its settings.json, 30 by default) deletes the file.")
    if elsewhere:
        output.say(f"{elsewhere} more in other repositories or in none: "
                   "`abcd history missing --all-repos`")


def register(app, history, daemon) -> None:
    @history.command("missing")
    def missing_cmd(
        all_repos: bool = typer.Option(False, "--all-repos", help="Every harness transcript, whichever repository it belongs to (works anywhere)."),
        as_json: bool = typer.Option(False, "--json", help="Print the MissingReport as one JSON document."),
    ) -> None:
        """List harness transcripts not stored yet, with why and the days before the harness deletes them. Read-only."""
        from abcd_daemon.wire.messages import MissingRequest

        from ..connect import ask

        try:
            sha = "" if all_repos else runtime.checkout()[1].root_sha
            reply = ask(MissingRequest())
            report = reply.report if reply is not None else _survey()
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        shown = report if all_repos else report.only_lane(sha)
        elsewhere = len(report.items) - len(shown.items)
        if as_json:
            output.emit_json(shown)
        else:
            render_missing(shown, elsewhere=elsewhere, scope="" if all_repos else " of this repository")
