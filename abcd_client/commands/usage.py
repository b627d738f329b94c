"""``abcd usage REPORT``: tokens and cost by day, week, month, session, repository,
model or agent type — from the index, served by the daemon when one answers and
in-process otherwise, brought level with the records first (as ``abcd search`` does). Costs come from the shipped pricing table (dated) and
``config.toml``'s ``[pricing]``; tokens of a model the table lacks are reported as
unpriced, never priced at zero. Usage known only from ``agent_progress`` copies of a
sub-agent whose transcript is not stored is printed apart (``copy_only_agent_progress``
in ``--json``), never added to the rows."""

from __future__ import annotations

from .. import output, runtime
from .search import index_roots, served, synced_index, time_window


#: How the report names the usage it holds apart (``Report.apart``).
APART = "usage known only from agent_progress copies of sub-agents whose transcript is not stored"


def _table(rows, breakdown: bool) -> list[str]:
    import shutil

    width = shutil.get_terminal_size((100, 24)).columns
    num = 12
    key_w = max(8, min(max((len(r.key) for r in rows), default=8), width - 6 * (num + 1) - 2))
    head = f"{'':{key_w}} " + " ".join(f"{h:>{num}}" for h in ("input", "output", "cache write", "cache read",
                                                                 "total", "cost USD"))
    lines = [head, "-" * min(width, len(head))]

    def line(r, indent: str = "") -> str:
        key = (indent + r.key)[:key_w]
        cost = f"{r.cost_usd:.2f}" + ("+" if r.unpriced_tokens else "")
        return f"{key:{key_w}} " + " ".join(f"{v:>{num}}" for v in (
            f"{r.input:,}", f"{r.output:,}", f"{r.cache_creation:,}", f"{r.cache_read:,}", f"{r.total:,}", cost))

    for r in rows:
        lines.append(line(r))
        if breakdown:
            lines += [line(m, "  ") for m in sorted(r.models.values(), key=lambda m: m.key)]
    return lines


def usage(kind: str = "daily", *, all_repos: bool = False, since: str = "", until: str = "",
          breakdown: bool = False, as_json: bool = False) -> None:
    """``abcd usage KIND``: print one report (the typer command and
    :mod:`abcd_client.quick` both call this)."""
    from abcd_daemon.errors import InputError
    from abcd_daemon.index.values import REPORTS
    from abcd_daemon.wire.messages import UsageRequest

    if kind not in REPORTS:
        output.fail(InputError(f"unknown report {kind!r}; one of {', '.join(REPORTS)}"), as_json=as_json)
    since_ns, until_ns = time_window(since, until, as_json=as_json)
    roots = index_roots(all_repos, as_json=as_json)
    reply = served(UsageRequest(kind=kind, roots=list(roots), since_ns=since_ns, until_ns=until_ns),
                   as_json=as_json)
    if reply is not None:
        rep = reply.report
    else:
        from abcd_daemon.index.pricing import Pricing
        from abcd_daemon.index.usage import report

        def answer(conn, roots):
            return report(conn, kind, Pricing(dict(runtime.config().pricing)), roots=roots,
                          since_ns=since_ns, until_ns=until_ns)

        rep = synced_index(roots, answer, as_json=as_json)
    if as_json:
        output.emit_json({"report": rep.kind, "pricing_as_of": rep.pricing_as_of, "unpriced_models": rep.unpriced,
                          "rows": [r.as_json(breakdown) for r in rep.rows],
                          "copy_only_agent_progress": [r.as_json(breakdown) for r in rep.apart]})
        return
    if not rep.rows and not rep.apart:
        output.say("abcd usage: no usage recorded in this range")
        return
    for ln in _table(rep.rows, breakdown):
        output.say(ln)
    if rep.apart:
        output.say("")
        output.say(f"{APART} (not in the rows above):")
        for ln in _table(rep.apart, breakdown):
            output.say(ln)
    output.say(f"prices as of {rep.pricing_as_of}")
    if rep.unpriced:
        output.say(f"unpriced (not in the table; cost marked +): {', '.join(rep.unpriced)} — "
                   "add them under [pricing.\"<model>\"] in config.toml")


def register(app, history, daemon) -> None:
    import typer

    @app.command("usage")
    def usage_cmd(
        kind: str = typer.Argument("daily", help="daily, weekly, monthly, session, repo, model, agent-type or agent (per thread)."),
        all_repos: bool = typer.Option(False, "--all-repos", help="Every repository, not only this one."),
        since: str = typer.Option("", "--since", help="Not before (ISO time or span: 7d, 36h)."),
        until: str = typer.Option("", "--until", help="Before (ISO time or span)."),
        breakdown: bool = typer.Option(False, "--breakdown", help="Per-model rows inside each row."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Token and cost roll-ups; agent-type splits sessions by main thread and sub-agent type."""
        usage(kind, all_repos=all_repos, since=since, until=until, breakdown=breakdown, as_json=as_json)
