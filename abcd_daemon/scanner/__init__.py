"""abcd's secret scanner and two-stage redaction engine.

Public API (what capture calls)::

    identity = probe_identity(repo_root, env=None)        # -> Identity, never raises
    scanner = build_scanner(identity, additions=())       # -> Scanner, never raises
    scanner.scan(data)                                    # -> list[Finding], stage one
    redact_text(scanner, text, deadline=None, clock=...)  # -> Redaction, or raises
        # DegradedScanner / ScanDeadline / RedactionResidual

Modules, by layer:

- the rules, as data: ``rules`` (what a rule is), ``bundled`` (our fixed table),
  ``generic`` (our generic detectors), ``provider`` + ``ruleset_cache`` (the
  maintained ruleset, read from kingfisher and cached), ``identity`` (rules built from
  the caller's identity), ``network``, ``pem``; ``build`` assembles them;
- deciding what a value is: ``checks`` (per-rule predicates), ``identity_checks``
  (the identity kinds' predicates), ``password_place`` (where a word is a password),
  ``values`` (placeholders, checksums, entropy), ``shapes`` (bare and prefixed tokens by
  shape);
- detection (stage one): ``compiled`` (a rule as the engine runs it), ``linear`` (RE2),
  ``literals`` (keywords from a regex), ``gate`` (Vectorscan: which rules match on which
  line), ``prefilter`` (Aho-Corasick keyword hits), ``spaced`` / ``views`` /
  ``escapes`` / ``windows`` (what the rules read: escaped whitespace as spaces,
  decoded views, escape units, lower-cased windows), ``engine`` (where each rule is
  tried → findings), ``matching`` (one rule in one window);
- redaction: ``mask`` (findings → masked bytes), ``jsonline`` (is a line still JSON),
  ``repeats`` (a value found once, masked wherever else it is spelled the same, over
  ``literal_scan``'s one pass for a set of literals), ``pipeline`` (home fold →
  sanitise → JSON guard → verify).
"""

from .build import build_scanner
from .engine import Finding, Scanner
from .identity import Identity, probe_identity
from .pipeline import Redaction, redact_text

__all__ = ["Finding", "Identity", "Redaction", "Scanner", "build_scanner", "probe_identity", "redact_text"]
