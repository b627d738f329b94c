"""The ``spaced`` copy of a buffer: escaped whitespace read as whitespace.

Patterns abcd did not write (the provider ruleset, and our generic rules, which
are written the same way) judge boundaries with ``\\b`` and ``[\\s;]`` on plain
text; in a transcript a token often starts right after an escaped newline
(``"$ cat creds\\nrubygems_…"``) or a ``%20``, where ``\\b`` does not hold between
``n`` and ``r``. Matching those patterns on this copy judges the token as it
reads.

Contract of :func:`spaced`: every whitespace escape (``\\n``, ``\\t``, ``\\r``: the
last backslash of a run and its letter, at any depth) and every percent escape of
whitespace (``%20``, ``%0A``, ``%0a``, ``%0D``, ``%0d``, ``%09``) is replaced by as
many spaces, and so is ``\\u2192``, the arrow Claude Code's Read tool puts between a
line's number and its text (``     12\u2192api_key = …``) as an encoder that escapes
non-ASCII spells it — a token starting a read file's line then has its boundary;
nothing else changes — the same length, the same offsets, the same
real newlines, so spans map back one to one. Punctuation escapes are left to the
decoded views (a ``%3D`` read as ``=`` here would move a name's ``=``).

Speed rule: the copy is made for every buffer the engine scans, so it must not cost
a pass per escape kind. The occurrences never overlap one another (each starts with
``\\`` or ``%`` and no other byte of any of them is one of those), so replacing
each kind in turn equals replacing all at once; one Vectorscan pass says which kinds
occur at all, and only those are replaced (without the library, a search per kind).
"""

from __future__ import annotations

try:
    import hyperscan
except ImportError:  # pragma: no cover - a dependency; then one search per kind
    hyperscan = None

#: What is replaced, each by as many spaces.
ESCAPES: tuple[bytes, ...] = (b"\\n", b"\\t", b"\\r", b"%20", b"%0A", b"%0a", b"%0D", b"%0d", b"%09",
                             b"\\u2192")
_SPACES = {esc: b" " * len(esc) for esc in ESCAPES}
_db = None


def _present(buf: bytes) -> list[bytes]:
    """The escapes of :data:`ESCAPES` that occur in ``buf``, in table order."""
    global _db
    if hyperscan is None:
        return [esc for esc in ESCAPES if esc in buf]
    if _db is None:
        db = hyperscan.Database()
        # (as patterns: every byte spelled \xHH, so none is read as syntax)
        patterns = ["".join(f"\\x{b:02x}" for b in esc).encode() for esc in ESCAPES]
        db.compile(expressions=patterns, ids=list(range(len(ESCAPES))),
                   elements=len(ESCAPES), flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(ESCAPES))
        _db = db
    seen: set[int] = set()

    def on_match(i, _from, _to, _flags, _ctx):
        seen.add(i)
        return 0

    _db.scan(buf, match_event_handler=on_match)
    return [ESCAPES[i] for i in sorted(seen)]


def spaced(buf: bytes) -> bytes:
    """``buf`` with its whitespace escapes as spaces (see the module contract)."""
    if b"\\" not in buf and b"%" not in buf:
        return buf
    for esc in _present(buf):
        buf = buf.replace(esc, _SPACES[esc])
    return buf
