"""The maintained provider ruleset, as data: kingfisher's rules turned into :class:`Rule`s.

Source: the ``kingfisher-bin`` package (MongoDB's Kingfisher, Apache-2.0), whose
binary prints its built-in rules — the Betterleaks set (the gitleaks successor's)
plus Google's Veles rules — with ``kingfisher rules list --format json``. We take
only the data (id, pattern, confidence); matching, masking and verification stay
ours. A new ruleset arrives with ``pip install -U kingfisher-bin``; its version is
in :data:`RulesetInfo.version` and so in every record (``scanner:`` frontmatter).

Contract of :func:`load_ruleset`:
- returns the rules, or raises :class:`RulesetUnavailable` naming why (package
  missing, binary not runnable, output not the expected JSON, a pattern RE2 cannot
  compile). ``build_scanner`` turns that into a degraded scanner, which refuses every
  capture — a scanner missing its provider rules is not a scanner we store with;
- patterns are Go RE2 syntax and are compiled with ``google-re2`` (linear time: no
  input can make a rule backtrack), Latin-1 so offsets are byte offsets, and
  ``never_nl`` so no rule matches across a line (the engine's line-locality);
- the secret is the pattern's first capture group that took part in the match, else
  the whole match (the convention of gitleaks-family rules without ``secretGroup``);
  a group that can only capture a fixed word (``sonar[_.-]?(login|token)…(token)``:
  the listing lost the rule's ``secretGroup``) names the secret rather than holding
  it, and is made non-capturing (:func:`uncapture_names`) so it is never the one masked;
- a value that is a placeholder or already masked (``values``) is not a finding;
- hidden composite parts that find identifiers (ids, hosts, names) are left out;
- severity: ``high`` confidence rules are hard_fail (a residual refuses), the rest
  warn (masked, never refusing);
- keywords are derived from each pattern (:mod:`.literals`); a rule with none runs
  on every line;
- the result is cached per process, keyed by the binary's path, size and mtime, and
  on disk for the next process (:mod:`.ruleset_cache`: the same key plus the package
  version and the conversion code's source).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
import os
import re
import subprocess
from pathlib import Path

import msgspec

from . import ruleset_cache
from .gate import syntax
from .literals import required_literals
from .rules import HARD, WARN, Rule

NAME = "kingfisher"
DIST = "kingfisher-bin"
PROVIDER_SOURCE = "provider"
_TIMEOUT_S = 60.0
_MAX_OUTPUT = 64 << 20
_VERBOSE = re.compile(r"^\(\?x\)")


class RulesetUnavailable(Exception):
    """The provider ruleset could not be loaded; the message says why and what to do."""


class _Entry(msgspec.Struct):
    id: str
    pattern: str
    confidence: str = "medium"
    visible: bool = True


#: Hidden rules are the parts composite rules validate with. Those that find an
#: identifier (a client or key id, a host, a URL, a user or account name) are not
#: secrets and are left out; the hidden secret parts (an AWS secret key, an API
#: secret, a passphrase) are kept.
_IDENTIFIER_PART = re.compile(
    r"(?:client|app|application|account|key|tenant|token|auth|service-account)-id|-id(?:\.\d+)?$|"
    r"host|url|domain|(?:user|cloud|account|storage-account|token)-?name|address|repository")


@dataclasses.dataclass(frozen=True)
class RulesetInfo:
    name: str
    version: str
    rules: tuple[Rule, ...]

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def binary_path() -> Path:
    """Where the installed package keeps its binary. Raises :class:`RulesetUnavailable`."""
    spec = importlib.util.find_spec("kingfisher")
    if spec is None or not spec.submodule_search_locations:
        raise RulesetUnavailable(
            f"the provider ruleset package {DIST!r} is not installed; "
            f"install it with `pip install {DIST}` in abcd's environment"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "bin" / "kingfisher"
    if not path.is_file() or not os.access(path, os.X_OK):
        raise RulesetUnavailable(f"the {DIST} package has no runnable binary at {path}; reinstall it")
    return path


def load_ruleset() -> RulesetInfo:
    """The provider rules of the installed package (cached). Raises :class:`RulesetUnavailable`."""
    path = binary_path()
    st = path.stat()
    return _load(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _load(path: str, _size: int, _mtime_ns: int) -> RulesetInfo:
    try:
        version = importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        raise RulesetUnavailable(f"{DIST} has no package metadata; reinstall it") from None
    from ..paths import cache_dir

    cached_in = cache_dir()
    key = ruleset_cache.cache_key(path, _size, _mtime_ns, version)
    rules = ruleset_cache.load(cached_in, key, PROVIDER_SOURCE)
    if rules is None:
        rules = _convert(path)
        ruleset_cache.store(cached_in, key, rules)
    return RulesetInfo(NAME, version, rules)


def _convert(path: str) -> tuple[Rule, ...]:
    """Run the binary and turn its listing into rules. Raises :class:`RulesetUnavailable`."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C", "NO_COLOR": "1"}
    try:
        proc = subprocess.run(
            [path, "rules", "list", "--format", "json", "--quiet"],
            capture_output=True, timeout=_TIMEOUT_S, env=env, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise RulesetUnavailable(f"could not run {path} to list its rules: {exc}") from None
    if proc.returncode != 0 or len(proc.stdout) > _MAX_OUTPUT:
        raise RulesetUnavailable(
            f"`kingfisher rules list` failed (exit {proc.returncode}): "
            f"{proc.stderr.decode('utf-8', 'replace').strip()[:200]}"
        )
    try:
        entries = msgspec.json.decode(proc.stdout, type=list[_Entry])
    except msgspec.DecodeError as exc:
        raise RulesetUnavailable(f"`kingfisher rules list` printed something that is not its rule list: {exc}") from None
    if not entries:
        raise RulesetUnavailable("`kingfisher rules list` listed no rules")
    kept = [e for e in entries if e.visible or not _IDENTIFIER_PART.search(e.id)]
    return tuple(_rule(e) for e in kept)


def _rule(entry: _Entry) -> Rule:
    pattern = unverbose(entry.pattern) if _VERBOSE.match(entry.pattern) else entry.pattern
    pattern = _BIG_REPEAT.sub(_unbound, pattern)
    pattern = widen_terminators(pattern)
    pattern = uncapture_names(pattern)
    literals = required_literals(pattern)
    return Rule(
        name=entry.id,
        kind=f"provider:{entry.id.split('.', 1)[-1]}",
        severity=HARD if entry.confidence == "high" else WARN,
        keywords=tuple(sorted(literals)) if literals else (),
        regex=pattern,
        boundary="",
        source=PROVIDER_SOURCE,
    )


#: RE2 caps a counted repetition at 1000; Go's engine at the same. A larger bound
#: (``{16,2048}``) is widened to ``{16,}``: a superset, so nothing is missed.
_BIG_REPEAT = re.compile(r"(?<!\\)\{(\d+),(\d+)\}")
_RE2_MAX_REPEAT = 1000


def _unbound(m: re.Match[str]) -> str:
    return "{%s,}" % m.group(1) if int(m.group(2)) > _RE2_MAX_REPEAT else m.group(0)


#: The token terminators the betterleaks set writes after a secret (whitespace,
#: ``;``, a quote, an escaped newline, the end) …
_TERMINATORS = (r"[\s;]|\\[nr]|$", r"""[\x60'"\s;]|\\[nr]|$""")
#: … widened by the punctuation that ends a token in a URL's query (``&``), JSON
#: and code (``,`` ``)`` ``}`` ``]``), markup (``<`` ``>``) and tables (``|``). None is
#: a byte any of those secrets' bodies can hold, so the rule still never takes a
#: prefix of a longer token.
_MORE_TERMINATORS = "&,)<>}\\]|"


def widen_terminators(pattern: str) -> str:
    """``pattern`` with its trailing terminator class (see ``_TERMINATORS``) widened."""
    for t in _TERMINATORS:
        if t in pattern:
            cls_end = t.index("]")
            pattern = pattern.replace(t, t[:cls_end] + _MORE_TERMINATORS + t[cls_end:])
    return pattern


#: A group's body that can only match fixed words: literals (letters, digits, ``_ . -``,
#: blanks) joined by ``|``, optionally case-insensitive.
_NAME_GROUP_BODY = re.compile(r"(?:\?i:)?[A-Za-z0-9_ .\-]+(?:\|[A-Za-z0-9_ .\-]+)*")


def uncapture_names(pattern: str) -> str:
    """``pattern`` with every capturing group whose body can only match fixed words
    (``(login|token)``, ``(?P<alg>aGJHY2lPaU)``) made non-capturing (``(?:``); every
    other byte unchanged. Escapes and character classes are skipped, so a ``(`` in
    them is never read as a group."""
    stack: list[tuple[int, int] | None] = []
    rewrites: list[tuple[int, int]] = []  # (offset of "(", offset of its body): replaced by "(?:"
    try:
        for i, c in syntax(pattern):
            if c == "(":
                if pattern.startswith("(?P<", i) or (pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!")):
                    stack.append((i, pattern.index(">", i) + 1))
                elif pattern.startswith("(?", i):
                    stack.append(None)
                else:
                    stack.append((i, i + 1))
            elif c == ")" and stack:
                group = stack.pop()
                if group is not None and _NAME_GROUP_BODY.fullmatch(pattern, group[1], i):
                    rewrites.append(group)
    except ValueError:
        return pattern  # an unclosed class: RE2 refuses the pattern anyway
    for start, body in sorted(rewrites, reverse=True):
        pattern = pattern[:start] + "(?:" + pattern[body:]
    return pattern


def unverbose(pattern: str) -> str:
    """A ``(?x)`` pattern with its free-spacing removed (RE2 has no ``x`` flag):
    unescaped whitespace outside classes and ``#`` comments are dropped."""
    out: list[str] = []
    i, n, in_class = 4, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == "#":
            while i < n and pattern[i] != "\n":
                i += 1
            continue
        elif not c.isspace():
            out.append(c)
        i += 1
    return "".join(out)
