"""The provider ruleset as converted once, cached on disk for the next process.

Turning ``kingfisher rules list`` into :class:`~.rules.Rule`\\ s costs every process
that builds a scanner about half a second (running the binary, and parsing ~450
patterns for their required literals) — the daemon at each start, ``abcd redact`` and
``capture`` at each run. The result depends only on the installed binary and on our
conversion code, so it is kept under the cache directory like the gate's database.

Contract:
- :func:`cache_key` names one conversion: the binary's path, size and mtime, the
  package's version, and the source of the modules that convert (``provider``,
  ``literals``, and ``gate``, whose regex reader ``provider`` uses) — a reinstalled or upgraded package, or a changed conversion, is a
  miss, never a stale hit;
- :func:`load` answers the rules stored under a key, or None for a missing, foreign
  (not owner-only, not a regular file of ours: :mod:`abcd_daemon.fsio.cache_file`),
  oversized or undecodable file — the caller then converts afresh;
- :func:`store` never raises: a cache that cannot be written is rebuilt next time.
The cached rules are data only (name, kind, severity, keywords, pattern); the engine
compiles and checks them exactly as it does fresh ones, so a cached ruleset that RE2
cannot compile still degrades the scanner.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import msgspec

from ..fsio.cache_file import read_cached, write_cached
from .rules import Rule

_CAP = 16 << 20
_FORMAT = b"abcd-ruleset-1"


class _Cached(msgspec.Struct, array_like=True):
    name: str
    kind: str
    severity: str
    keywords: tuple[str, ...]
    regex: str


@functools.lru_cache(maxsize=1)
def _conversion_digest() -> bytes:
    """What the conversion code is: a changed ``provider``, ``literals`` or ``gate`` misses."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(_FORMAT)
    for name in ("provider.py", "literals.py", "gate.py", "ruleset_cache.py"):
        h.update((here / name).read_bytes())
    return h.digest()


def cache_key(path: str, size: int, mtime_ns: int, version: str) -> str:
    """The cache file's name for one binary and one conversion."""
    h = hashlib.sha256(_conversion_digest())
    h.update(f"\0{path}\0{size}\0{mtime_ns}\0{version}".encode("utf-8", "surrogateescape"))
    return f"ruleset-{h.hexdigest()[:32]}.json"


def load(cache_dir: str, key: str, source: str) -> tuple[Rule, ...] | None:
    """The rules cached under ``key`` (each of ``source``), or None (see the contract)."""
    data = read_cached(cache_dir, key, _CAP)
    if data is None:
        return None
    try:
        entries = msgspec.json.decode(data, type=list[_Cached])
    except msgspec.DecodeError:
        return None
    if not entries:
        return None
    return tuple(Rule(name=e.name, kind=e.kind, severity=e.severity, keywords=e.keywords, regex=e.regex,
                      boundary="", source=source) for e in entries)


def store(cache_dir: str, key: str, rules: tuple[Rule, ...]) -> None:
    """Keep ``rules`` under ``key`` (best effort)."""
    entries = [_Cached(r.name, r.kind, r.severity, tuple(r.keywords), r.regex) for r in rules]
    write_cached(cache_dir, key, msgspec.json.encode(entries))
