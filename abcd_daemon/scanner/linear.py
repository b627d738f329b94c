"""Linear-time regex compilation (google-re2) for rules abcd did not write itself.

The provider ruleset and repository additions are compiled here, never with
``re``: RE2 has no backtracking, so no pattern and no input can wedge a scan (a
``(a+)+$`` addition runs in linear time). Options, and why:
- Latin-1: every byte is one character, so offsets are byte offsets and arbitrary
  (non-UTF-8) transcript bytes are matched, never rejected;
- ``never_nl``: no match crosses a newline — the engine's line-locality contract;
- errors are raised, never logged to stderr by the library.
RE2 refuses what it cannot run in linear time (lookaround, backreferences): such a
pattern raises :class:`ValueError` with RE2's reason.
"""

from __future__ import annotations

import functools

import re2

_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
_OPTIONS.never_nl = True
_OPTIONS.log_errors = False
_OPTIONS_I = re2.Options()
_OPTIONS_I.encoding = re2.Options.Encoding.LATIN1
_OPTIONS_I.never_nl = True
_OPTIONS_I.log_errors = False
_OPTIONS_I.case_sensitive = False


@functools.lru_cache(maxsize=4096)
def compile_linear(pattern: str, ignorecase: bool = False):
    """``pattern`` (a ``str``) compiled for bytes (cached: compiled patterns are
    immutable and shared). Raises :class:`ValueError`."""
    try:
        raw = pattern.encode("latin-1")
    except UnicodeEncodeError:
        raw = pattern.encode("utf-8")
    try:
        # ``(?m)``: ``^`` and ``$`` hold at line boundaries, as the gate (Vectorscan,
        # HS_FLAG_MULTILINE) judges them — and as a line judged alone would: RE2 never
        # lets ``$`` hold at an ``endpos`` short of the text's end, nor ``\s`` take
        # the newline (``never_nl``), so without it a token at a line's end is missed.
        return re2.compile(b"(?m)" + raw, _OPTIONS_I if ignorecase else _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(f"not a linear-time (RE2) pattern: {reason}") from None
