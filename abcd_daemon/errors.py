"""The error tree: every refusal abcd makes, each with a message a user can act on.

Rules:
- Every error carries a complete, user-facing sentence (``str(err)``) saying what was
  wrong and, through ``hint``, what to do. Messages never carry unredacted transcript
  bytes: a residual names kinds and positions, never the matched text (invariant 2).
- The split that matters to the drain is :class:`PermanentError` (a property of the
  bytes: every retry gets the same answer, so the entry is quarantined) versus
  everything else, which is retryable (the entry stays staged).
- :class:`InputError` is a refusal of what the caller asked for (CLI exit 2);
  everything else is a runtime fault (CLI exit 1).
- The CLI renders these at its edge; nothing below the CLI prints.
"""

from __future__ import annotations


def __getattr__(name: str):
    """``UNDECODABLE`` — what decoding untrusted JSON or msgpack can raise: malformed
    bytes, the wrong shape, or nesting deeper than the decoder follows (RecursionError,
    not a DecodeError). Every reader of bytes it did not write catches this whole tuple.
    Built on first use, so importing the error tree does not import msgspec (CLI
    start-up)."""
    if name == "UNDECODABLE":
        import msgspec

        value = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class AbcdError(Exception):
    """Base of every error abcd raises on purpose.

    ``hint`` is an optional second sentence telling the user what to do; ``details``
    optional lines that belong to the message (the candidates of an ambiguous id), one
    fact each, printed one per line below it.
    """

    exit_code = 1

    def __init__(self, message: str, *, hint: str = "", details=()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = tuple(details)

    def __str__(self) -> str:
        return self.message


class InputError(AbcdError):
    """The caller asked for something malformed (a bad id, flag or file name)."""

    exit_code = 2


class AmbiguousId(InputError):
    """A short id (a prefix) names more than one session or agent; ``details`` lists
    the candidates."""


class NotFoundError(AbcdError):
    """A record, staged entry or session the caller named does not exist."""

    exit_code = 1


class ReadRefused(AbcdError):
    """A guarded read refused a file: not regular, a symlink, over its cap, or empty.

    ``reason`` is one of ``not-regular``, ``too-big``, ``empty``, ``unreadable``. The
    first three are what the caller named (bad input, exit 2); ``unreadable`` is an
    I/O fault (exit 1).
    """

    def __init__(self, message: str, *, reason: str, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        self.exit_code = 1 if reason == "unreadable" else 2


class StorePathError(AbcdError):
    """A directory or file on the path to the store is not what it must be
    (a symlink, a non-directory, owned by someone else)."""


class RetryableError(AbcdError):
    """A failure that says nothing about the transcript's bytes; a later attempt
    may succeed, so staged bytes stay staged."""


class LockContention(RetryableError):
    """A lock could not be taken within its budget."""


class DegradedScanner(RetryableError):
    """The scanner could not be built whole (a rule failed to compile, a configured
    addition is unusable). Every capture is refused until it is repaired."""


class ScanDeadline(RetryableError):
    """Scanning one transcript took longer than its deadline; refused rather than
    stored half-checked. Retried later (the machine may have been busy)."""


class PermanentError(AbcdError):
    """A failure that is a property of the transcript's bytes: every retry reaches
    the same answer, so the drain quarantines the entry with this message."""


class RedactionResidual(PermanentError):
    """Stage two found blocking spans that survived redaction. Carries only kinds and
    positions, never the matched bytes."""

    def __init__(self, kinds: list[str], positions: list[tuple[int, int]], *,
                 lines: list[int] | None = None, rules: list[str] | None = None) -> None:
        self.kinds = sorted(set(kinds))
        self.positions = positions
        #: 1-based line of each position (in the text being redacted), and the rule
        #: that found it — what a user needs to find the residual, never its bytes.
        self.lines = lines or []
        self.rules = rules or []
        where = ""
        if self.lines:
            first = f"line {self.lines[0]}" + (f" (rule {self.rules[0]})" if self.rules and self.rules[0] else "")
            where = f" at {first}" + (f" and {len(self.lines) - 1} more" if len(self.lines) > 1 else "")
        super().__init__(
            f"redaction left {len(positions)} blocking span(s) unresolved "
            f"[{', '.join(self.kinds)}]{where}; refusing to write",
            hint="nothing was stored from this transcript; the line and rule above say "
            "where to look",
        )


class FrameLost(PermanentError):
    """The lineage frame did not survive redaction, so the frontmatter cannot be
    split back off the body safely."""


class ProtocolError(AbcdError):
    """A peer sent bytes that are not a valid frame of the wire protocol."""


class BadMessage(ProtocolError):
    """A whole frame arrived but is no valid message (an unknown op, a field of the
    wrong type). The stream is still in step: the peer is told, the connection kept."""

    exit_code = 2


class DaemonUnavailable(AbcdError):
    """No daemon answered on the socket."""


class DaemonBusy(AbcdError):
    """A daemon is there but its listen queue stayed full (``EAGAIN``) for the whole
    connect budget: busy, never to be mistaken for absent."""


class StoreMismatch(AbcdError):
    """The daemon that answered serves another store (its ``ABCD_HOME`` is not ours)."""
