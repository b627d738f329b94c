"""What a rule is (reference §3.2–3.8): :class:`Rule`, its kinds and severities.

The bundled table itself is ``bundled``. A :class:`Rule` says what to look for and how to mask it; it holds no code. The
engine compiles ``regex`` (a ``str`` compiled as a bytes pattern) and runs it only
around hits of its ``keywords`` (lower-case literals searched on a lower-cased copy
of the text). Every rule carries positive and negative examples, and the tests run
every one of them (``tests/scanner/test_rules.py``).

How a rule is tried around a keyword hit at ``s`` (the engine's contract):
- ``anchor`` empty and ``back == 0``: ``regex.match`` at ``s`` — the match starts on
  the keyword (prefixed tokens, PEM markers, literals).
- ``anchor`` set (a regex byte class): ``regex.match`` where the run of
  anchor-class bytes that ends at ``s`` starts (at most ``back`` bytes back, never
  before the line start, and never on the tail of a JSON escape) — IP addresses,
  e-mail, host names, the caller's home after its escaping backslashes. A rejected
  candidate lets the rule skip the hits inside it (they would start the same run).
- ``back > 0`` without ``anchor``: ``regex.search`` from ``back`` bytes before
  ``s`` (line start at the earliest); the first acceptable match starting at or
  before ``s`` is taken.
- The window ends ``reach`` bytes after ``s``; a match that touches the window end
  short of the line end is re-matched to the line end, so unbounded tokens are
  taken whole. No bundled regex matches a newline (the line-locality contract
  stage two relies on, see ``engine`` and ``pipeline``).
- Rules are tried hit by hit in text order with a per-rule high-water mark: a hit
  before the end of the rule's last match (or rejected anchored run) is skipped.
- ``boundary``: ``"word"`` is a leading ``\\b`` judged in Python and escape-aware
  (``escapes.boundary_before``); ``""`` is none. A ``check`` names a predicate in
  the engine's registry that may veto a match by its content or surroundings.
- ``group``: the group whose span is masked (0 = whole match).
- ``source``: ``""`` for a fixed rule; ``identity.*`` for a rule whose regex and
  keywords are built from the caller's :class:`~.identity.Identity` at build time;
  ``"addition"`` for a repository addition (its window is clipped to the line,
  since its regex may cross one).
- ``near``/``near_count``: a cheap count test before any regex (see the field).

What the bundled rules leave to others: a value with no provider prefix, marker or
shape is the generic detectors' (``generic``: secret-named assignments, flags,
connection strings, bare and prefixed tokens judged by shape) and the maintained
ruleset's (``provider``). What the whole scanner still misses is measured and listed
in the README's known limits (``bench/recall.py``). Non-ASCII letters in identity
values match case-sensitively (``bytes.lower`` folds ASCII only).
"""

from __future__ import annotations

import dataclasses

HARD, WARN, INFO = "hard_fail", "warn", "info"
#: ``Rule.source`` of our generic detectors (``generic``, ``forms``).
GENERIC_SOURCE = "generic"
#: Severity order: a repository addition may move a bundled rule up, never down.
SEVERITY_RANK = {INFO: 0, WARN: 1, HARD: 2}

#: Identity and network kinds: masked by a readable placeholder, and blocking in
#: stage two whatever their severity (reference §3.3). Order breaks placeholder ties.
PLACEHOLDERS: dict[str, bytes] = {
    "home_path_self": b"~",
    "home_path_other": b"[redacted-path]",
    "real_email": b"[redacted-email]",
    "email_address": b"[redacted-email]",
    "real_name": b"[redacted-name]",
    "github_username": b"[redacted-user]",
    "local_username": b"[redacted-user]",
    "net:ipv4": b"[redacted-address]",
    "net:ipv6": b"[redacted-address]",
    "net:mac": b"[redacted-mac]",
    "net:lan_hostname": b"[redacted-hostname]",
    "net:device_hostname": b"[redacted-hostname]",
}
IDENTITY_KINDS = frozenset(PLACEHOLDERS)
HOME_KINDS = frozenset({"home_path_self", "home_path_other"})
#: Masked with stars end to end (no fingerprint head or tail): a PEM span, and the
#: values of key/value rules — their key still matches after masking, so the value
#: must read as masked (a span of only ``*`` is never a finding).
WHOLE_STAR_KINDS = frozenset(
    {"token:pem_private_key", "rp_session_key", "secret:password_assignment", "secret:url_credentials"}
)
PEM_KIND = "token:pem_private_key"


@dataclasses.dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    severity: str
    keywords: tuple[str, ...]
    regex: str
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    group: int = 0
    back: int = 0
    anchor: str = ""
    reach: int = 512
    boundary: str = "word"
    check: str = ""
    source: str = ""
    ignorecase: bool = False
    #: Cheap pre-test before any regex: ``near`` occurs at least ``near_count`` times
    #: in ``[hit, hit + reach)`` (an IPv4 address holds three dots, a MAC five colons).
    near: str = ""
    near_count: int = 0
    #: The rule's Vectorscan gate pattern, when its own (assertions removed) would
    #: pass nearly every line: it must match, on its line, every match the rule's
    #: ``check`` can accept (``engine``; tested by ``test_gate``).
    gate: str = ""
    #: False: the rule is left out of the gate and searched over every line. For a
    #: keyword-less rule whose pattern matches on nearly every transcript line, the
    #: gate would spend one of its costliest patterns to spare almost no line.
    gated: bool = True
    #: A keyword-less rule's match longer than this many bytes is no candidate: it is
    #: skipped before its groups are read (a 200 KB base64 image is not a token, and
    #: reading its groups costs more than the whole line's scan). 0: no limit.
    longest: int = 0
    #: And one shorter than this many bytes (its delimiters included) is no candidate
    #: either: its check refuses every such value, so its groups are not read (the
    #: search goes on from the byte after its start, as after any rejected value).
    #: Only for a rule with ``longest``.
    shortest: int = 0
    #: A keyword-less rule's candidate whose value opens with one of these leads (its
    #: first run of 1–16 letters and digits and the ``_``/``-`` after it, compared
    #: lower-case) is no candidate either: its check refuses every such value (a
    #: harness id, ``toolu_…``, on every transcript line), so it is skipped before its
    #: groups are read. Only for a rule with ``longest`` (tested against its check).
    refused_leads: frozenset[bytes] = frozenset()
    #: How a keyworded rule is searched: ``"hits"``, in a window around each keyword
    #: hit (``back``/``reach``); ``"neighbourhood"``, once per neighbourhood of its
    #: hits, as a provider rule (``compiled.PROVIDER_BACK``/``PROVIDER_REACH``; the
    #: leftmost acceptable matches, never one starting inside a match already taken
    #: or rejected) — for rules whose keywords fill transcripts (``token`` in every
    #: ``input_tokens``), where a search per hit is most of the scan.
    search: str = "hits"


def value_group(m) -> int:
    """The first capture group that took part in ``m``: a rule that spells its value
    several ways (single-quoted | double-quoted | bare) holds it in whichever matched."""
    g = 1
    while m.start(g) < 0:
        g += 1
    return g
