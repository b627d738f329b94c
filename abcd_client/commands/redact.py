"""``abcd redact FILE|-``: the capture pipeline's redaction, on a file, storing nothing.

Same code path as capture (DESIGN §3.4): the scanner of the current checkout (its git
identity and ``[[scanner.rules]]`` additions; the global identity outside a
checkout), the same deadline, the same fail-closed verify. The redacted bytes go to
stdout or ``--out`` (written atomically, 0600); ``--json`` prints the findings —
rule, kind, line and count, never a secret — and the scanner's version instead.
Exit codes: 0 redacted; 1 refused (the reason names the line and rule; nothing is
written); 2 bad input (unreadable, empty, over a cap).

Streaming (issue 16): the input is redacted in batches of whole lines, so a file of
any size under ``max_transcript_bytes`` / ``max_line_bytes`` needs memory for its
longest line, not for the file. The redacted text goes to an owner-only temp file
first (beside ``--out``, else in the temp dir) and is published only once every line
passed, so a refusal anywhere still writes nothing.
"""

from __future__ import annotations

import os
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
        try:
            cfg = runtime.config()
            with _source(file, cfg) as (src, size, until_eof):
                result, refusal, tmp = _redact(src, size, until_eof, cfg, out)
            scanner_label = _SCANNER[0].label
            if refusal is not None:
                if as_json:
                    output.emit_json(_report(scanner_label, None, refusal))
                output.note(f"abcd: refused: {refusal}")
                output.note("abcd: nothing was written; a `[[scanner.rules]]` entry that matches its own "
                            "mask, or text the scanner cannot make safe, is refused rather than half-masked")
                raise typer.Exit(1)
            try:
                if out is not None:
                    _publish(tmp, out)
                elif not as_json:
                    _copy_out(tmp)
            finally:
                _unlink(tmp)
            if as_json:
                output.emit_json(_report(scanner_label, result, None))
        except AbcdError as err:
            output.fail(err, as_json=as_json)


#: The scanner of the last :func:`_redact` (its label goes in the report).
_SCANNER: list = [None]


class _source:
    """``(binary file, size, until_eof)`` for FILE (guarded, under the configured caps)
    or stdin (read to EOF, refused past ``max_transcript_bytes``). Raises InputError."""

    def __init__(self, file: str, cfg) -> None:
        self.file, self.cfg, self.f = file, cfg, None

    def __enter__(self):
        from abcd_daemon.fsio.guarded import ReadRefused, open_guarded

        if self.file == "-":
            return typer.get_binary_stream("stdin"), self.cfg.max_transcript_bytes, True
        try:
            fd, size = open_guarded(self.file, self.cfg.max_transcript_bytes, what="file",
                                    allow_empty=False)
        except ReadRefused as exc:  # bad input: exit 2, the reason as it is
            raise InputError(str(exc), hint="give a readable, non-empty regular file, or - for stdin") from None
        self.f = os.fdopen(fd, "rb", buffering=1 << 20)
        return self.f, size, False

    def __exit__(self, *exc) -> None:
        if self.f is not None:
            self.f.close()


def _redact(src, size: int, until_eof: bool, cfg, out):
    """Redact ``src`` chunk by chunk into an owner-only temp file (beside ``--out``, or
    in the temp dir for stdout: redacted text only), so a refusal in a late line
    writes nothing anywhere. Returns ``(result, refusal, temp path)``."""
    import time

    from abcd_daemon.errors import RedactionResidual
    from abcd_daemon.fsio.atomic import temp_file
    from abcd_daemon.queue.scanners import ScannerPool
    from abcd_daemon.store.chunks import OverCap, iter_chunks
    from abcd_daemon.store.stream import redact_plain

    scanner = _SCANNER[0] = ScannerPool(cfg).get(_checkout_root())
    name = "stdin" if until_eof else "the file"
    chunks = iter_chunks(src, size, line_cap=cfg.max_line_bytes, chunk_bytes=cfg.capture_chunk_bytes,
                         what=name, until_eof=until_eof)
    fd, tmp = temp_file(out.parent if out is not None else _tempdir())
    try:
        try:
            deadline = time.monotonic() + cfg.scan_deadline(size)
            result = redact_plain(scanner, chunks, fd, deadline=deadline, clock=time.monotonic)
        finally:
            os.close(fd)
    except RedactionResidual as exc:
        _unlink(tmp)
        return None, exc, ""
    except OverCap as exc:
        _unlink(tmp)
        raise InputError(str(exc), hint="raise max_line_bytes / max_transcript_bytes in config.toml") from None
    except BaseException:
        _unlink(tmp)
        raise
    if result.bytes_in == 0:
        _unlink(tmp)
        raise InputError("stdin was empty; nothing to redact")
    return result, None, tmp


def _tempdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def _publish(tmp: str, out: Path) -> None:
    """Move the redacted temp file to ``out`` (0600) atomically."""
    from abcd_daemon.fsio.atomic import fsync_dir, refuse_symlink_leaf

    try:
        refuse_symlink_leaf(out)
        os.replace(tmp, out)
        fsync_dir(out.parent)
    except OSError as exc:
        raise InputError(f"could not write {out}: {exc.strerror or exc}") from None


def _copy_out(tmp: str) -> None:
    with open(tmp, "rb") as f:
        while block := f.read(1 << 20):
            sys.stdout.buffer.write(block)
    sys.stdout.buffer.flush()


def _unlink(path: str) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def _checkout_root() -> str:
    try:
        root, _ = runtime.checkout()
    except AbcdError:
        return ""  # outside a checkout: the global git identity
    return root


def _report(scanner_label: str, result, refusal) -> dict:
    counts = Counter(result.findings) if result is not None else Counter()
    findings = [{"rule": rule, "kind": kind, "line": line, "count": n}
                for (rule, kind, line), n in sorted(counts.items(), key=lambda kv: (kv[0][2], kv[0][0]))]
    refused = None
    if refusal is not None:
        refused = {"reason": str(refusal),
                   "line": refusal.lines[0] if refusal.lines else None,
                   "rule": refusal.rules[0] if refusal.rules else None}
    return {
        "scanner": scanner_label,
        "refused": refused,
        "findings": findings,
        "secrets": result.secrets if result is not None else 0,
        "home_paths": result.home_paths if result is not None else 0,
        "lines": result.lines_in if result is not None else None,
        "bytes": result.bytes_in if result is not None else None,
    }
