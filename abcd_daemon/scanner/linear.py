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


class LinearMatch:
    """A match of :class:`Linear`: the subset of ``re.Match`` the engine and the
    checks use (``start``/``end``/``span``/``group`` by index), over the span list
    RE2 returned — no per-call group-count lookup, unlike google-re2's wrapper."""

    __slots__ = ("_text", "_spans")

    def __init__(self, text: bytes, spans: list[tuple[int, int]]) -> None:
        self._text = text
        self._spans = spans

    def start(self, group: int = 0) -> int:
        return self._spans[group][0]

    def end(self, group: int = 0) -> int:
        return self._spans[group][1]

    def span(self, group: int = 0) -> tuple[int, int]:
        return self._spans[group]

    def group(self, *groups: int):
        if len(groups) > 1:
            return tuple(self.group(g) for g in groups)
        s, e = self._spans[groups[0] if groups else 0]
        return None if s < 0 else self._text[s:e]

    def __repr__(self) -> str:
        return f"<LinearMatch span={self._spans[0]} match={self.group()!r}>"


class Linear:
    """A compiled RE2 pattern searched through RE2's own ``Match`` (one C call per
    search, spans back as a list) rather than google-re2's Python wrapper, which
    costs several Python calls per match object. Same matches: the same RE2
    program, the same anchoring, ``pos``/``endpos`` clamped as the wrapper does."""

    __slots__ = ("_match", "_bounds", "groups", "pattern")

    def __init__(self, compiled, bounds=None) -> None:
        self._match = compiled._regexp.Match
        # The same program without captures: it finds where a match starts and ends
        # (RE2's DFA) without the submatch pass, which costs more than the search.
        self._bounds = bounds._regexp.Match if bounds is not None else None
        self.groups = compiled.groups
        self.pattern = compiled.pattern

    def _run(self, anchor, text: bytes, pos: int, endpos: int | None) -> LinearMatch | None:
        n = len(text)
        pos = 0 if pos < 0 else n if pos > n else pos
        endpos = n if endpos is None or endpos > n else 0 if endpos < 0 else endpos
        if pos > endpos:
            return None
        spans = self._match(anchor, text, pos, endpos)
        if spans[0][0] < 0:
            return None
        return LinearMatch(text, spans)

    def search(self, text: bytes, pos: int = 0, endpos: int | None = None,
               latest: int | None = None) -> LinearMatch | None:
        """The leftmost match in ``[pos, endpos)``; with ``latest``, None as well when
        it starts after ``latest`` (then found without its groups: cheaper). The
        groups of a match are those of the anchored match at its start — the same
        match, as leftmost-first matching picks it the same way from there."""
        if latest is None or self._bounds is None:
            return self._run(_UNANCHORED, text, pos, endpos)
        n = len(text)
        pos = 0 if pos < 0 else n if pos > n else pos
        endpos = n if endpos is None or endpos > n else 0 if endpos < 0 else endpos
        if pos > endpos:
            return None
        start = self._bounds(_UNANCHORED, text, pos, endpos)[0][0]
        if start < 0 or start > latest:
            return None
        return self._run(_ANCHOR_START, text, start, endpos)

    def bounds(self, text: bytes, pos: int, endpos: int) -> tuple[int, int] | None:
        """Where the leftmost match in ``[pos, endpos)`` starts and ends, found
        without reading its groups (None when there is none)."""
        if self._bounds is None:
            m = self._run(_UNANCHORED, text, pos, endpos)
            return None if m is None else m.span()
        if pos > endpos:
            return None
        s, e = self._bounds(_UNANCHORED, text, pos, endpos)[0]
        return None if s < 0 else (s, e)

    def match(self, text: bytes, pos: int = 0, endpos: int | None = None) -> LinearMatch | None:
        return self._run(_ANCHOR_START, text, pos, endpos)


_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_ANCHOR_START = getattr(getattr(re2, "_Anchor", None), "ANCHOR_START", None)


def fast_linear(pattern: str, ignorecase: bool = False):
    """:func:`compile_linear`, searched through :class:`Linear` when this google-re2
    exposes RE2's ``Match`` (else the wrapper itself: slower, the same matches)."""
    compiled = compile_linear(pattern, ignorecase)
    if _UNANCHORED is None or not hasattr(getattr(compiled, "_regexp", None), "Match"):
        return compiled
    bounds = None
    if compiled.groups:
        try:
            bounds = re2.compile(compiled.pattern, _OPTIONS_NC_I if ignorecase else _OPTIONS_NC)
        except re2.error:
            bounds = None
    return Linear(compiled, bounds)


def _no_capture(options):
    out = re2.Options()
    for name in re2.Options.NAMES:
        setattr(out, name, getattr(options, name))
    out.never_capture = True
    return out


_OPTIONS_NC = _no_capture(_OPTIONS)
_OPTIONS_NC_I = _no_capture(_OPTIONS_I)
