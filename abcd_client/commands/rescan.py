"""``abcd history rescan | forget``: keep the stored corpus clean after the fact.

``rescan`` re-redacts records an older scanner stored (``abcd_daemon.store.rescan``),
for this repository or ``--all-repos``; ``--dry-run`` says what it would change.
Other repositories' lanes are rescanned with the global git identity (their
checkout may be anywhere): redacting more is never unsafe. ``forget`` removes one
record for good — the remedy for a secret found in the corpus — and says what it
cannot reach. Both run in-process under the lane lock the daemon's captures take.
"""

from __future__ import annotations

import typer

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime

_EXPORTS = ("exports you wrote with `abcd history reconstruct --out` (and anything pasted from them) "
            "are copies abcd does not track: delete those yourself")


def register(app, history, daemon) -> None:
    @history.command("rescan")
    def rescan_cmd(
        all_repos: bool = typer.Option(False, "--all-repos", help="Every repository in the store."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Redact and count, write nothing."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Re-redact stored records that an older scanner (ruleset) redacted."""
        import time

        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.store.lane import list_lanes
        from abcd_daemon.store.rescan import RescanReport, rescan_lane

        try:
            cfg = runtime.config()
            pool = ScannerPool(cfg)
            if all_repos:
                targets = [(lane, "") for lane in list_lanes(runtime.home())]
            else:
                root, lane = runtime.checkout()
                targets = [(lane, root)]
            total = RescanReport()
            label = ""
            for lane, root in targets:
                scanner = pool.get(root)
                if scanner.degraded:
                    raise InputError(f"the scanner is degraded: {scanner.degraded}",
                                     hint="fix it first; nothing was rescanned")
                label = scanner.label
                total.add(rescan_lane(lane, scanner=scanner, lock_timeout_s=cfg.lane_lock_timeout_s,
                                      dry_run=dry_run,
                                      deadline_for=lambda n: time.monotonic() + cfg.scan_deadline(n)))
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        doc = {"scanner": label, "dry_run": dry_run, "checked": total.checked, "current": total.current,
               "rewritten": total.rewritten, "relabelled": total.relabelled,
               "newly_masked": dict(sorted(total.newly_masked.items())),
               "refused": [{"record": name, "reason": why} for name, why in total.refused]}
        if as_json:
            output.emit_json(doc)
        else:
            verb = "would rewrite" if dry_run else "rewrote"
            output.say(f"abcd history rescan — {total.checked} record(s) checked with {label}: "
                       f"{total.current} already current, {verb} {total.rewritten}, "
                       f"{total.relabelled} unchanged (relabelled)")
            for rule, n in sorted(total.newly_masked.items(), key=lambda kv: -kv[1]):
                output.say(f"  newly masked: {rule} × {n}")
            for name, why in total.refused:
                output.say(f"  refused: {name}: {why} — `abcd history forget {name} --yes` removes it")
        if total.refused:
            raise typer.Exit(1)

    @history.command("forget")
    def forget_cmd(
        key: str = typer.Argument(..., help="Record file name, agent id or session id."),
        yes: bool = typer.Option(False, "--yes", help="Confirm: the record is removed for good."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ) -> None:
        """Remove one stored record for good (e.g. it holds a secret the scanner missed)."""
        from abcd_daemon.store.rescan import forget

        try:
            if not yes:
                raise InputError("forgetting a record is irreversible; pass --yes to confirm")
            lane = runtime.lane()
            record = forget(lane, key, lock_timeout_s=runtime.config().lane_lock_timeout_s)
        except AbcdError as err:
            output.fail(err, as_json=as_json)
        if as_json:
            output.emit_json({"forgotten": record.name, "session_id": record.session_id,
                              "agent_id": record.agent_id, "not_reached": _EXPORTS})
            return
        output.say(f"abcd history forget — removed {record.name}")
        output.say(f"  not reached: {_EXPORTS}")
