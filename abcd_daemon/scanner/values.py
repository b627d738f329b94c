"""Is this value a secret? The gates every provider and generic finding passes.

Three predicates, all pure over the candidate value's bytes:

- :func:`already_masked` — abcd's own mask: only ``*``, or the seal's shape (at most
  ``SEAL_HEAD`` + ``SEAL_TAIL`` = 5 bytes of the original around a run of stars). A
  rescan must not find its own output again.
- :func:`is_placeholder` — text that stands for a secret without being one, so a
  transcript keeps its meaning: documented example keys (AWS's, Stripe's, …), values
  that name themselves (``example``, ``placeholder``, ``your_…``, ``changeme``,
  ``dummy``, ``redacted``), template references (``${VAR}``, ``$VAR``, ``{{ x }}``,
  ``<your-token>``, ``%(x)s``), and runs of one or two characters (``XXXX…``,
  ``****``, ``0000…``).
- :func:`looks_secret` — the generic detectors' shape and entropy gate: a value next
  to a secret-ish name is masked unless it reads as something else — a number, a
  version or a date, a boolean or null, a path or a URL, a code reference
  (``os.environ[...]``, ``getApiKey()``, ``self.token``), an identifier or word
  without a digit — or its Shannon entropy is too low for its length.
"""

from __future__ import annotations

import math
import re
from collections import Counter

#: Documented example credentials (provider docs, SDK samples): never real.
EXAMPLE_SECRETS = frozenset({
    b"AKIAIOSFODNN7EXAMPLE",
    b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    b"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    b"AKIAI44QH8DHBEXAMPLE",
    b"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    b"pk_test_TYooMQauvdEDq54NiTphI7jx",
    b"xoxb-not-a-real-token-this-will-not-work",
})
_NAMED = re.compile(
    rb"(?i)example|placeholder|your[_-]?(?:own[_-]?)?(?:api|access|secret|auth|app|token|key|pass|client|private)"
    rb"|changeme|change[_-]me|dummy|redacted|replace[_-]?me|insert[_-]|<[^>]{1,64}>|\$\{[^}]{1,64}\}"
    rb"|\{\{[^}]{0,64}\}\}|%\([a-z_]+\)s|^\$[A-Za-z_][A-Za-z0-9_]*$|^xxx|xxxx|\.\.\.|\xe2\x80\xa6"
)
_NUMBERISH = re.compile(rb"[+-]?[0-9][0-9_.,:+eE/-]*[a-zA-Z]{0,3}")  # 1024, 1.2.3, 2024-01-01, 10ms
_WORDISH = re.compile(rb"[A-Za-z][A-Za-z_.:-]*")  # words and identifiers without a digit
_CODE_REF = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(|\[|$)|.*\(\)?$|.*\[['\"]?$")
_LITERALS = frozenset({b"true", b"false", b"null", b"none", b"nil", b"undefined", b"yes", b"no", b"on", b"off"})


def already_masked(value: bytes) -> bool:
    """Only stars, or a seal (≤ 5 original bytes around a run of ≥ 4 stars)."""
    stars = value.count(b"*")
    if stars == len(value):
        return True
    return stars >= 4 and len(value) - stars <= 5 and b"****" in value


def is_placeholder(value: bytes) -> bool:
    """A value that stands for a secret (documented, named, templated, or a run)."""
    if value in EXAMPLE_SECRETS or len(set(value)) <= 2:
        return True
    return _NAMED.search(value) is not None


def entropy(value: bytes) -> float:
    """Shannon entropy in bits per byte."""
    n = len(value)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def looks_secret(value: bytes, min_len: int = 8) -> bool:
    """The generic gate: ``value`` (taken after a secret-ish name) is worth masking."""
    v = value.strip(b"'\"`")
    if len(v) < min_len or is_placeholder(v) or v.lower() in _LITERALS:
        return False
    if _NUMBERISH.fullmatch(v) or _WORDISH.fullmatch(v):
        return False
    if v[:1] in b"/~." or b"://" in v or v.startswith(b"file:"):
        return False  # a path or a URL (URL credentials are their own rule)
    if _CODE_REF.match(v) and not re.search(rb"[0-9]", v):
        return False  # os.environ, getApiKey(), self.token
    classes = sum(bool(re.search(p, v)) for p in (rb"[a-z]", rb"[A-Z]", rb"[0-9]", rb"[^A-Za-z0-9]"))
    h = entropy(v)
    if len(v) >= 20:
        return h >= 3.0 and classes >= 2
    return classes >= 2 and h >= 2.5 and re.search(rb"[0-9]|[^A-Za-z0-9_.-]", v) is not None
