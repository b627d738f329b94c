"""abcd's secret scanner and two-stage redaction engine.

Public API (what capture calls)::

    identity = probe_identity(repo_root, env=None)        # -> Identity, never raises
    scanner = build_scanner(identity, additions=())       # -> Scanner, never raises
    scanner.scan(data)                                    # -> list[Finding], stage one
    redact_text(scanner, text, deadline=None, clock=...)  # -> Redaction, or raises
        # DegradedScanner / ScanDeadline / RedactionResidual

Modules: ``rules`` (the table, as data), ``prefilter`` (Aho-Corasick), ``views``
(JSON-escape and percent-decode views), ``pem``, ``identity``, ``network``,
``checks`` (per-rule predicates), ``escapes`` (escape-unit facts), ``engine``
(scan → findings), ``build`` (bundled + identity + additions), ``mask`` (stage-one
masking), ``pipeline`` (sanitise → JSON guard → verify).
"""

from .build import build_scanner
from .engine import Finding, Scanner
from .identity import Identity, probe_identity
from .pipeline import Redaction, redact_text

__all__ = ["Finding", "Identity", "Redaction", "Scanner", "build_scanner", "probe_identity", "redact_text"]
