"""The gate: which rules match on which line of a buffer, in one Vectorscan pass.

Several hundred provider patterns share a few keywords (``key``, ``token``,
``secret``), so a keyword hit alone would run dozens of RE2 searches on every busy
line. One multi-pattern scan (``hyperscan``, the Vectorscan build kingfisher itself
uses) first says which patterns have a match in the buffer at all; the engine then
tries only those around their keyword hits. Contract:

- :meth:`Gate.matching_by_line` returns, per line, the indices of the patterns with
  at least one match on it. It is a superset of what RE2 finds line by line (same syntax; ``$``
  and ``^`` per line; a Vectorscan match may cross a newline where RE2 never does),
  so gating never hides a finding — tested against the ungated scan;
- for a Python ``re`` rule, whose assertions see a window's ends as the text's,
  :func:`superset_pattern` gives the pattern to gate it by (every assertion
  removed), or None when it knows none; :func:`word_prefix_except` spells "a word
  prefix that is none of these" for hand-written gates (``Rule.gate``);
- a pattern Vectorscan cannot compile is never gated: it is in :attr:`Gate.ungated`
  and never reported, and the caller tries it everywhere; without the library the
  gate passes everything (correct, only slower);
- compiling ~500 patterns takes seconds, so the database is cached: per process,
  and on disk under :func:`~abcd_daemon.paths.cache_dir` keyed by the SHA-256 of the
  patterns (a directory verified as ``safedir`` verifies every abcd directory, a file
  we wrote, owner-only, opened by descriptor without following links; anything else
  is ignored and rebuilt).
"""

from __future__ import annotations

import functools
import hashlib

from ..fsio.cache_file import read_cached, write_cached
from collections.abc import Collection, Sequence

try:
    import hyperscan
except ImportError:  # pragma: no cover - a dependency; the gate then passes all
    hyperscan = None

_FLAGS = 0
_TICK_LINES = 512
if hyperscan is not None:
    _FLAGS = hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY


class Gate:
    """A compiled set of patterns; see the module contract."""

    def __init__(self, patterns: Sequence[str], cache_dir: str | None = None) -> None:
        self._n = len(patterns)
        self._db, ungated = _database(tuple(patterns), cache_dir)
        #: Positions of the patterns Vectorscan could not take: never reported by
        #: :meth:`matching_by_line`; the caller must treat them as matching everywhere.
        self.ungated = frozenset(ungated)

    def matching_by_line(self, buf: bytes, tick=None) -> list[tuple[int, int, frozenset[int]]]:
        """``(line_start, line_end, patterns matching on that line)`` for each line
        of ``buf`` that has any, in order (``line_end`` is the offset of its newline
        or the end). Lines with none are left out. A pattern is judged on its line alone,
        as RE2 matches it (never across a newline). ``tick`` (the deadline) is called
        every ``_TICK_LINES`` lines."""
        if self._db is None:
            everything = frozenset(range(self._n))
            return [(0, len(buf), everything)]
        out: list[tuple[int, int, frozenset[int]]] = []
        hit: set[int] = set()

        def on_match(i, _from, _to, _flags, _ctx):
            hit.add(i)
            return 0

        scan = self._db.scan
        view = memoryview(buf)
        pos, n = 0, len(buf)
        countdown = _TICK_LINES
        while pos <= n:
            if tick is not None:
                countdown -= 1
                if countdown < 0:
                    tick()
                    countdown = _TICK_LINES
            end = buf.find(b"\n", pos)
            if end < 0:
                end = n
            if end > pos:
                scan(view[pos:end], match_event_handler=on_match)  # (no copy of the line)
                if hit:
                    out.append((pos, end, frozenset(hit)))
                    hit.clear()
            pos = end + 1
        return out


_QUANTIFIER_START = "*+?{"
_ZERO_WIDTH_ESCAPES = "bBAZz"


def superset_pattern(regex: str, ignorecase: bool = False) -> str | None:
    """A Vectorscan pattern matching every substring that the Python ``re`` pattern
    ``regex`` matches in any window ``[pos, endpos)`` of any text, or None when no
    such rewrite is known (backreferences, conditionals, a quantified assertion).

    Every zero-width assertion is removed — ``\\b \\B \\A \\Z \\z ^ $`` and
    lookarounds: without them a pattern matches a superset of the substrings it
    matched, and no window boundary can then make a match the gate does not see.
    Named groups become ``(?:``; atomic groups ``(?:`` and possessive quantifiers
    greedy ones (their matches are a subset of those); Python's ``{,n}`` becomes
    ``{0,n}`` (elsewhere it is a literal); non-ASCII is spelled as ``\\xHH`` bytes
    (the rule is compiled from its UTF-8 bytes)."""
    out: list[str] = ["(?i)"] if ignorecase else []
    i, n = 0, len(regex)
    removed = False  # the previous token was a removed assertion
    while i < n:
        ch = regex[i]
        if removed and ch in _QUANTIFIER_START and not (ch == "{" and _quantifier_end(regex, i) < 0):
            return None  # a quantifier on an assertion: its meaning would move
        removed = False
        if ch == "\\":
            nxt = regex[i + 1 : i + 2]
            if not nxt:
                return None
            if nxt in _ZERO_WIDTH_ESCAPES:
                removed = True
                i += 2
                continue
            if nxt.isdigit() and nxt != "0":
                return None  # a backreference
            out.append(_ascii(regex[i : i + 2]))
            i += 2
            continue
        if ch == "[":
            j = class_end(regex, i)
            if j < 0:
                return None
            out.append(_ascii(regex[i:j]))
            i = j
            continue
        if ch in "^$":
            removed = True
            i += 1
            continue
        if ch == "(" and regex.startswith("(?", i):
            head = regex[i + 2 : i + 4]
            if head[:1] in ("=", "!") or head in ("<=", "<!"):
                j = _group_end(regex, i)
                if j < 0:
                    return None
                removed = True
                i = j
                continue
            if head[:1] == "#":
                j = regex.find(")", i)
                if j < 0:
                    return None
                i = j + 1
                continue
            if head[:1] == "P":
                if regex.startswith("(?P<", i):
                    j = regex.find(">", i)
                    if j < 0:
                        return None
                    out.append("(?:")
                    i = j + 1
                    continue
                return None  # (?P=name): a backreference
            if head[:1] == "(":
                return None  # a conditional group
            if head[:1] == ">":
                out.append("(?:")
                i += 3
                continue
            flags = regex[i + 2 : i + 2 + len(regex[i + 2 :]) - len(regex[i + 2 :].lstrip("aiLmsux-"))]
            if "x" in flags:
                return None  # verbose syntax: whitespace and comments would be read as text
            out.append("(?")
            i += 2
            continue
        if ch in "*+?":
            out.append(ch)
            i += 1
            if i < n and regex[i] == "+":
                i += 1  # possessive: as greedy
            continue
        if ch == "{":
            j = _quantifier_end(regex, i)
            if j > 0:
                body = regex[i + 1 : j - 1]
                out.append("{0" + body + "}" if body.startswith(",") else "{" + body + "}")
                i = j
                if i < n and regex[i] == "+":
                    i += 1
                continue
            out.append("\\{")
            i += 1
            continue
        out.append(_ascii(ch))
        i += 1
    return "".join(out)


def word_prefix_except(words: Collection[bytes], max_len: int = 16) -> str:
    """A pattern for ``[A-Za-z][A-Za-z0-9]{1,max_len-1}[_.-]`` (a word of 2 to
    ``max_len`` letters and digits, then a separator) that matches none of ``words``
    (compared case-insensitively; each a word and its separator) and every other
    such string: the complement of a finite set, spelled over its trie."""
    trie: dict = {}
    for w in words:
        w = w.lower()
        if len(w) < 3 or w[-1:] not in (b"_", b".", b"-") or not w[:-1].isalnum() or not w[:1].isalpha():
            continue  # not of the prefix's form: it could never match anyway
        node = trie
        for c in w[:-1]:
            node = node.setdefault(c, {})
        node.setdefault(None, set()).add(w[-1])
    return _except(trie, 0, max_len)


def _except(node: dict, depth: int, max_len: int) -> str:
    """The strings of the prefix form that continue from trie ``node`` (after
    ``depth`` bytes) and are not words ending there."""
    alts: list[str] = []
    seps = set(b"_.-") - node.get(None, set())
    if depth >= 2 and seps:  # end here, with a separator no word ends with here
        alts.append("[" + "".join("\\" + chr(c) for c in sorted(seps)) + "]")
    if depth < max_len:
        taken = sorted(chr(c) for c in node if c is not None)
        members = [chr(c) for c in range(128) if chr(c).isalpha() or (depth and chr(c).isdigit())]
        free = [c for c in members if c.lower() not in taken]
        if free:  # a byte no word continues with: any tail of the form may follow
            alts.append("[" + "".join(free) + "]" + f"[A-Za-z0-9]{{{max(0, 1 - depth)},{max_len - depth - 1}}}[_.\\-]")
        for c in taken:
            inner = _except(node[ord(c)], depth + 1, max_len)
            if inner:
                alts.append((f"[{c}{c.upper()}]" if c.isalpha() else c) + "(?:" + inner + ")")
    return "|".join(alts)


def _ascii(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c if c.isascii() else "".join(f"\\x{b:02x}" for b in c.encode("utf-8")) for c in text)


def _quantifier_end(regex: str, i: int) -> int:
    """The end of a ``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}`` quantifier at ``i``, else -1
    (Python then reads the brace as a literal)."""
    j = regex.find("}", i)
    if j < 0:
        return -1
    body = regex[i + 1 : j]
    lo, comma, hi = body.partition(",")
    if not (lo or hi) or not (lo.isdigit() or lo == "") or not (hi.isdigit() or hi == ""):
        return -1
    if not comma and not lo:
        return -1
    return j + 1


def class_end(regex: str, i: int) -> int:
    """The offset after the character class opening at ``i`` (or -1)."""
    j = i + 1
    if regex[j : j + 1] == "^":
        j += 1
    if regex[j : j + 1] == "]":
        j += 1  # a leading ']' is a literal
    while j < len(regex):
        c = regex[j]
        if c == "\\":
            j += 2
            continue
        if c == "]":
            return j + 1
        j += 1
    return -1


def syntax(regex: str, i: int = 0):
    """``(offset, character)`` for each character of ``regex`` from ``i`` that is
    syntax: escapes (``\\x``) and character classes are skipped whole. Raises
    ValueError at a class that never closes."""
    n = len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = class_end(regex, i)
            if i < 0:
                raise ValueError("an unclosed character class")
            continue
        yield i, c
        i += 1


def _group_end(regex: str, i: int) -> int:
    """The offset after the group opening at ``i`` (escapes and classes skipped), or -1."""
    depth = 0
    try:
        for j, c in syntax(regex, i):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
    except ValueError:
        return -1
    return -1


def _pattern_bytes(pattern: str) -> bytes:
    """``pattern``'s bytes as RE2 reads the same rule (``linear.compile_linear``):
    Latin-1 when it can be (one byte per character), else UTF-8 — a rule naming a
    word in Cyrillic or CJK matches the UTF-8 bytes a transcript holds."""
    try:
        return pattern.encode("latin-1")
    except UnicodeEncodeError:
        return pattern.encode("utf-8")


@functools.lru_cache(maxsize=4)
def _database(patterns: tuple[str, ...], cache_dir: str | None):
    if hyperscan is None or not patterns:
        return None, ()
    raw = [_pattern_bytes(p) for p in patterns]
    key = hashlib.sha256(b"\0".join(raw)).hexdigest()[:32]
    name = f"gate-{key}.hsdb"
    cached = _load(cache_dir, name) if cache_dir else None
    if cached is not None:
        return cached
    ungated: list[int] = []
    usable = list(range(len(raw)))
    db = _compile(raw, usable)
    if db is None:  # find the few it cannot take, one by one, and leave them ungated
        ungated = [i for i in usable if _compile(raw, [i]) is None]
        usable = [i for i in usable if i not in set(ungated)]
        db = _compile(raw, usable) if usable else None
        if db is None:
            return None, ()
    if cache_dir:
        _store(cache_dir, name, ",".join(map(str, ungated)).encode() + b"\n" + hyperscan.dumpb(db))
    return db, tuple(ungated)


def _compile(raw: list[bytes], ids: list[int]):
    db = hyperscan.Database()
    try:
        db.compile(expressions=[raw[i] for i in ids], ids=ids, flags=[_FLAGS] * len(ids))
    except Exception:
        return None
    return db


def _load(cache_dir: str, name: str):
    """The cached database ``name``, or None. Only a file :func:`read_cached` trusts
    (our own, owner-only, in a verified directory) is loaded; anything else is ignored
    and rebuilt."""
    data = read_cached(cache_dir, name, 64 << 20)
    if data is None:
        return None
    try:
        head, _, blob = data.partition(b"\n")
        ungated = tuple(int(x) for x in head.split(b",") if x)
        db = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
        db.scratch = hyperscan.Scratch(db)  # a loaded database has none of its own
        return db, ungated
    except Exception:
        return None


def _store(cache_dir: str, name: str, blob: bytes) -> None:
    """Best effort (:func:`write_cached`): a cache that cannot be written is rebuilt
    next time."""
    write_cached(cache_dir, name, blob)
