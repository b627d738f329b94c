"""One log line: the rule for text written to ``daemon.log`` and ``spool/shim.log``.

Standard library only and no imports (the hook shim loads it, like
:mod:`abcd_daemon.paths`). A log is read line by line by people and by tools, so a
line must end where abcd ended it: every character that could break, hide or forge a
line — C0 and C1 controls, DEL, the Unicode line and paragraph separators — is written
as a visible escape, and so is the backslash, so an escape in the log always means an
escape was made (``\\n`` in a log line is never a newline somebody typed as two
characters). What may be logged at all is a separate rule (no payload value ever
reaches a log; see :mod:`abcd_daemon.intake.reasons`); this module only makes sure
that whatever is logged stays on its line.
"""

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x5C: "\\\\"}


def _escape_one(code: int) -> str:
    named = _NAMED.get(code)
    if named is not None:
        return named
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


_TABLE = {code: _escape_one(code) for code in list(range(0x20)) + [0x5C, 0x7F]
          + list(range(0x80, 0xA0)) + [0x2028, 0x2029]}


def escape(text: str) -> str:
    """``text`` as one line: control characters and backslashes escaped (pure)."""
    return text.translate(_TABLE)
