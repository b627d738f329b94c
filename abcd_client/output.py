"""The CLI's edge: how results and errors reach the user.

Rules (DESIGN §3.9):
- ``--json`` renders exactly one JSON document on stdout; diagnostics go to stderr.
- Every path printed is home-folded to ``~``; every externally derived string printed to
  a terminal passes :func:`abcd_daemon.termsafe.clean_line` or ``sanitize_block``.
- An :class:`~abcd_daemon.errors.AbcdError` becomes ``abcd: <message>`` (+ the hint) on
  stderr and its exit code (2 for input refusals, 1 otherwise); with ``--json`` an
  ``{"error": …}`` document is printed on stdout as well. No traceback reaches a user.
  :func:`fail` raises ``SystemExit`` (not typer's ``Exit``), so a verb run without typer
  (:mod:`abcd_client.quick`) exits the same way.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False  # typing itself is a served verb's millisecond
if TYPE_CHECKING:
    from typing import Any, NoReturn

from abcd_daemon.errors import AbcdError
from abcd_daemon.sizes import human_bytes
from abcd_daemon.termsafe import clean_line, sanitize_block

__all__ = ["emit_decoded", "emit_json", "fail", "fold_home", "fold_paths", "human_bytes", "note", "say"]


def fold_home(text: str) -> str:
    """Replace the caller's home directory prefix with ``~`` wherever it appears."""
    home = os.path.expanduser("~").rstrip("/")
    if not home or home == "/":
        return text
    out = []
    start = 0
    while True:
        i = text.find(home, start)
        if i < 0:
            out.append(text[start:])
            return "".join(out)
        after = text[i + len(home) : i + len(home) + 1]
        if after.isalnum():  # /home/me vs /home/metoo
            out.append(text[start : i + len(home)])
        else:
            out.append(text[start:i] + "~")
        start = i + len(home)


def fold_paths(value: Any) -> Any:
    """Recursively home-fold every string in a JSON-able value."""
    if isinstance(value, str):
        return fold_home(value)
    if isinstance(value, dict):
        return {k: fold_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [fold_paths(v) for v in value]
    return value


def emit_json(value: Any) -> None:
    """Print one JSON document (home-folded, 2-space indent) on stdout."""
    import msgspec  # here, not at the top: a verb that prints no JSON never imports it

    encoder = msgspec.json.Encoder(order="deterministic")
    data = msgspec.json.format(encoder.encode(fold_paths(msgspec.to_builtins(value))), indent=2)
    sys.stdout.write(data.decode("utf-8") + "\n")
    sys.stdout.flush()


def emit_decoded(value: Any) -> None:
    """:func:`emit_json` for a value :func:`abcd_client.json_text.loads` decoded (its
    numbers as the daemon's msgspec wrote them): the same bytes, without msgspec."""
    from .json_text import dumps

    sys.stdout.write(dumps(fold_paths(value)) + "\n")
    sys.stdout.flush()


def say(line: str = "") -> None:
    """Print one line of prose on stdout (home-folded, terminal-safe)."""
    sys.stdout.write(sanitize_block(fold_home(line)) + "\n")


def note(line: str) -> None:
    """Print one diagnostic line on stderr (home-folded, terminal-safe)."""
    sys.stderr.write(clean_line(fold_home(line), 4096) + "\n")
    sys.stderr.flush()


def fail(err: AbcdError, *, as_json: bool = False) -> NoReturn:
    """Render ``err`` at the edge and exit with its code."""
    message = fold_home(str(err))
    hint = fold_home(err.hint)
    details = [fold_home(line) for line in getattr(err, "details", ())]
    if as_json:
        error = {"message": message, "hint": hint,
                 "kind": getattr(err, "kind", "") or type(err).__name__}
        if details:
            error["details"] = details
        emit_decoded({"error": error})  # strings only: the same bytes as emit_json, no msgspec
    note(f"abcd: {message}")
    for line in details:
        note(f"abcd:   {line}")
    if hint:
        note(f"abcd: {hint}")
    raise SystemExit(err.exit_code)
