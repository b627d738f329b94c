"""``abcd history retry``, and how every listing shows ``spool/failed``.

Failed hook payloads belong to no repository (often no repository could be resolved —
that is why they failed), so they are store-wide: ``abcd history staged`` lists them in
any checkout, ``staged --all-repos`` counts them, and ``retry`` / ``discard`` work
anywhere. Their reasons name payload fields, never values; the payload itself is the
unredacted file named in the listing.
"""

from __future__ import annotations

from typing import List, Optional  # the typer command's annotations are read from here

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime


def render_failed(failed, *, summary_only: bool = False) -> None:
    """The failed payloads of the store: one line each with its reason (or, with
    ``summary_only``, their count and size)."""
    if not failed:
        return
    total = sum(f.bytes for f in failed)
    if not summary_only:
        output.say("FAILED HOOK PAYLOADS — intake could not use these (store-wide, not tied to "
                   "this repository):")
        for f in failed:
            what = f.event or "unknown event"
            output.say(f"{f.failed_at[:19]}Z  {f.id}  {what}  {f.bytes} bytes")
            output.say(f"    {f.reason or f.error or '(no reason recorded)'}")
    output.say(f"{len(failed)} failed hook payload(s) hold {output.human_bytes(total)} of "
               "UNREDACTED harness text in spool/failed. Fix the cause, then "
               "`abcd history retry --all`; or remove one with `abcd history discard <id> --yes`.")


def render_outcomes(outcomes) -> None:
    for o in outcomes:
        label = {"staged": "staged", "restaged": "staged", "already-staged": "staged",
                 "noted": "taken", "gap": "taken", "failed": "FAILED", "retry": "RETRY LATER",
                 "dropped": "dropped", "gone": "gone"}.get(o.status, o.status)
        line = f"{label:<12}{o.name.removesuffix('.json')}"
        if o.message:
            line += f"  {o.message}"
        output.say(line)
    if not outcomes:
        output.say("abcd history retry — spool/failed is empty; nothing to retry")


def retry_locally(keys: list[str], everything: bool):
    """The in-process retry: the daemon's intake core, run here."""
    from abcd_daemon.intake.failed import retry_failed
    from abcd_daemon.intake.resolve import LaneResolver
    from abcd_daemon.intake.take import take

    home, cfg = runtime.home(), runtime.config()
    resolver = LaneResolver(home, cfg)
    return retry_failed(home, keys, everything=everything, take_one=lambda path: take(
        home, path, resolver=resolver, config=cfg, now_ns=runtime.now_ns()))


def register(app, history, daemon) -> None:
    import typer

    @history.command("retry")
    def retry_cmd(
        ids: Optional[List[str]] = typer.Argument(None, metavar="[ID]...", help="Failed payload ids (see `abcd history staged`); a unique prefix of 6+ characters will do."),
        everything: bool = typer.Option(False, "--all", help="Retry every payload in spool/failed."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Put failed hook payloads back through intake (after fixing what their reason
        names). Works anywhere. Exits 1 when one fails again."""
        from abcd_daemon.wire.messages import RetryRequest

        from ..connect import ask

        keys = list(ids or [])
        try:
            if not keys and not everything:
                raise InputError("name the failed payloads to retry, or pass --all",
                                 hint="`abcd history staged` lists them with their ids")
            if keys and everything:
                raise InputError("give ids or --all, not both")
            reply = ask(RetryRequest(keys=keys, everything=everything))
            outcomes = reply.outcomes if reply is not None else retry_locally(keys, everything)
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json({"outcomes": outcomes})
        else:
            render_outcomes(outcomes)
        again = [o for o in outcomes if o.status in ("failed", "retry")]
        if again:
            if not as_json:
                output.note(f"abcd: {len(again)} payload(s) could not be taken; their reasons say why")
            raise typer.Exit(1)
