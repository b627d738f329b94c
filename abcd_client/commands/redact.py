"""``abcd redact FILE|-``: the capture pipeline's redaction, on a file, storing nothing.

Same code path as capture (DESIGN §3.4): the scanner of the current checkout (its git
identity and ``[[scanner.rules]]`` additions; the global identity outside a
checkout), the same deadline, the same fail-closed verify. The redacted bytes go to
stdout or ``--out`` (written atomically, 0600); ``--json`` prints the findings —
rule, kind, line and count, never a secret — and the scanner's version instead.
Exit codes: 0 redacted; 1 refused (the reason names the line and rule; nothing is
written); 2 bad input (unreadable, empty, over the cap).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from abcd_daemon.errors import AbcdError, InputError

from .. import output, runtime


def register(app, history, daemon) -> None:
    @app.command("redact")
    def redact_cmd(
        file: str = typer.Argument(..., help="Transcript (or any text) file, or - for stdin."),
        out: Optional[Path] = typer.Option(None, "--out", help="Write the redacted text here instead of stdout."),
        as_json: bool = typer.Option(False, "--json", help="Print the findings as one JSON document (not the text)."),
    ) -> None:
        """Print FILE with every secret, home path and identity masked, as capture would
        store it. Stores nothing. Use it before you paste a transcript anywhere."""
        from abcd_daemon.errors import RedactionResidual
        from abcd_daemon.fsio.atomic import atomic_write
        from abcd_daemon.fsio.guarded import ReadRefused, read_guarded
        from abcd_daemon.limits import TRANSCRIPT_CAP
        from abcd_daemon.queue.scanners import ScannerPool
        from abcd_daemon.scanner import redact_text

        try:
            if file == "-":
                raw = typer.get_binary_stream("stdin").read(TRANSCRIPT_CAP + 1)
                if len(raw) > TRANSCRIPT_CAP:
                    raise InputError(f"stdin is over the {TRANSCRIPT_CAP}-byte cap; refused whole")
                if not raw:
                    raise InputError("stdin was empty; nothing to redact")
            else:
                try:
                    raw = read_guarded(file, TRANSCRIPT_CAP, what="file", allow_empty=False)
                except ReadRefused as exc:  # bad input: exit 2, the reason as it is
                    raise InputError(str(exc), hint="give a readable, non-empty regular file, or - for stdin") from None
            cfg = runtime.config()
            scanner = ScannerPool(cfg).get(_checkout_root())
            try:
                result = redact_text(scanner, raw, deadline=_deadline(cfg, len(raw)))
            except RedactionResidual as exc:
                if as_json:
                    output.emit_json(_report(scanner, raw, None, exc))
                output.note(f"abcd: refused: {exc}")
                output.note("abcd: nothing was written; a `[[scanner.rules]]` entry that matches its own "
                            "mask, or text the scanner cannot make safe, is refused rather than half-masked")
                raise typer.Exit(1)
            if out is not None:
                try:
                    atomic_write(out, result.text)
                except OSError as exc:
                    raise InputError(f"could not write {out}: {exc.strerror or exc}") from None
            if as_json:
                output.emit_json(_report(scanner, raw, result, None))
            elif out is None:
                sys.stdout.buffer.write(result.text)
                sys.stdout.buffer.flush()
        except AbcdError as err:
            output.fail(err, as_json=as_json)


def _checkout_root() -> str:
    try:
        root, _ = runtime.checkout()
    except AbcdError:
        return ""  # outside a checkout: the global git identity
    return root


def _deadline(cfg, nbytes: int) -> float:
    import time

    return time.monotonic() + cfg.scan_deadline(nbytes)


def _report(scanner, raw: bytes, result, refusal) -> dict:
    counts = Counter(result.findings) if result is not None else Counter()
    findings = [{"rule": rule, "kind": kind, "line": line, "count": n}
                for (rule, kind, line), n in sorted(counts.items(), key=lambda kv: (kv[0][2], kv[0][0]))]
    refused = None
    if refusal is not None:
        refused = {"reason": str(refusal),
                   "line": refusal.lines[0] if refusal.lines else None,
                   "rule": refusal.rules[0] if refusal.rules else None}
    return {
        "scanner": scanner.label,
        "refused": refused,
        "findings": findings,
        "secrets": result.secrets if result is not None else 0,
        "home_paths": result.home_paths if result is not None else 0,
        "lines": raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1),
        "bytes": len(raw),
    }
