"""Checks for tokens that stand alone: no name, no provider prefix, only a shape.

Most provider formats a ruleset does not know, or knows only next to the
provider's name, still read as what they are when pasted bare: a run of 24+ bytes
of mixed-case base62 (with ``+/_-.`` and ``=`` padding) that changes character
class every couple of bytes — ``LTAI…``, ``ATBB…``, ``EAAG…``, base64 session
tokens. The generic rule ``bare_token`` finds such runs between delimiters; the
check here decides, and lets through what transcripts are full of:

- paths and URLs (a ``/`` and a ``.`` in one run, or a leading ``/ . ~``);
- identifiers harnesses write (``toolu_…``, ``msg_…``, ``req_…``), keys public by
  design (Stripe's ``pk_live_…``), and values of
  keys that hold ids, digests and signatures rather than secrets (``"signature":``,
  ``"id":``, ``"sha":`` …);
- Go module digests (``go.sum``'s ``h1:`` hashes);
- file contents in base64 (a data URI, a known file signature such as PNG's
  ``iVBORw0KGgo``), public keys (after ``ssh-…``, inside a PUBLIC KEY or
  CERTIFICATE block of the same line), a whole line of 64 or 76 base64 bytes
  (wrapped base64: a PEM body line in a decoded view, ``base64`` output);
- anything longer than ``MAX_BARE`` (blobs, not credentials) or that does not read
  as random (mixed case, or 32+ upper case and digits past hex: ``_upper_random``);
- GitHub/npm tokens with a wrong checksum (``values.bad_checksum``).

Pure functions of the line's bytes and the match; never raise.
"""

from __future__ import annotations

import re

from .values import DIGIT, HARNESS_ID_PREFIXES, PUBLIC_PREFIXES, TOKEN_LEAD, bad_checksum, class_profile, entropy, is_placeholder

#: Longer runs are blobs (images, signatures, archives), never a pasted credential.
MAX_BARE = 1024
#: Shorter runs are too short to tell from a word or an id (``bare_token``'s floor).
MIN_BARE = 24
#: JSON keys whose string values are ids, digests or signatures.
_BENIGN_KEYS = re.compile(
    rb"(?i)(?:^|[^a-z0-9_])(?:signature|data|id|uuid|[a-z]*uuid|[a-z]*_?id|sha|sha1|sha256|hash|digest|checksum|"
    rb"integrity|etag|nonce|cursor|media_type|encrypted_content|thinking)\\*[\"']?\s*[:=]\s*\\*[\"']?$"
)
#: base64 of file signatures: PNG, JPEG, GIF, PDF, ZIP, gzip, XML, SVG, WebP/RIFF.
_FILE_MAGIC = (b"iVBORw0KGgo", b"/9j/", b"R0lGOD", b"JVBERi0", b"UEsDB", b"H4sI", b"PD94bWwg", b"PHN2Zy", b"UklGR")
#: (Spaces may be ``+`` or, in the check's spaced copy, runs: a percent-encoded header.)
#: A public key's algorithm name just before the value (``ssh-ed25519 AAAA…``).
_KEY_ALGORITHM = re.compile(rb"(?:ssh|ecdsa)-[a-z0-9-]+ $|sk-ssh-[a-z0-9@.-]+ $")
_B64_LINE = re.compile(rb"[A-Za-z0-9+/]+")
_PUBLIC_BLOCK = re.compile(rb"-----BEGIN[ +]+(?:[A-Z0-9]+[ +]+)*?(?:PUBLIC[ +]+KEY|CERTIFICATE)-----")


def _alnum_random(v: bytes) -> bool:
    """Mixed case, digits, short class runs, no long lower-case word, high entropy."""
    upper, lower, digits, runs = class_profile(v)
    if not upper or not lower or digits < 2:
        return False
    if len(v) / runs > 2.8 or re.search(rb"[a-z]{9}|[A-Z]{9}", v):
        return False
    # Short words joined (Qwen/Qwen3-Next-80B-A3B-Instruct) are a name, not a token.
    if max(len(p) for p in re.split(rb"[_\-/.+]", v)) < 12:
        return False
    return entropy(v) >= (4.0 if len(v) >= 32 else 3.7)


_NOT_HEX_UPPER = re.compile(rb"[G-Z]")


def _upper_random(v: bytes) -> bool:
    """32+ upper-case letters and digits (no lower case): a base36 or base32 key
    (ScrapingBee's, a TOTP seed), not a hex digest (it needs six letters past F), a
    constant's name (no digits) or words run together (their entropy is low)."""
    if len(v) < 32 or not v.isupper() or not v.isalnum():
        return False
    _upper, _lower, digits, runs = class_profile(v)
    if digits < 6 or len(_NOT_HEX_UPPER.findall(v)) < 6 or len(v) / runs > 4:
        return False
    return entropy(v) >= 4.3


def bare_random(buf: bytes, m, ctx) -> bool:
    """The ``bare_token`` check (see the module docstring). Cheapest tests first:
    the rule runs on every line its gate names."""
    v = m.group(1)
    if not MIN_BARE <= len(v) <= MAX_BARE or v[:1] in b"/.~" or (b"/" in v and b"." in v):
        return False
    if b"//" in v[2:] and b"+" not in v and not v.endswith(b"="):
        return False  # a path's double slash (base64 may hold one: it has ``+`` or padding)
    lead = TOKEN_LEAD.match(v)
    if lead is not None and lead.group().lower() in HARNESS_ID_PREFIXES or v.startswith(PUBLIC_PREFIXES):
        return False
    if len(v) in (64, 76) and _B64_LINE.fullmatch(v):
        s, e = m.span(1)
        if (s == 0 or buf[s - 1] == 0x0A) and (e == len(buf) or buf[e] == 0x0A):
            return False  # a whole line of wrapped base64 (a PEM body line, `base64` output)
    if v.startswith(_FILE_MAGIC) or not (_alnum_random(v) or _upper_random(v)):
        return False
    if v.count(b"/") == 1 and b"+" not in v and not v.endswith(b"=") and not DIGIT.search(v.split(b"/", 1)[0]):
        return False  # owner/name (HuggingFaceTB/SmolLM3-3B): one slash, a name's first part has no digit
    if is_placeholder(v) or bad_checksum(v):
        return False
    s = m.start(1)
    ls = buf.rfind(b"\n", 0, s) + 1
    before = buf[max(ls, s - 48) : s]
    if _BENIGN_KEYS.search(before) or before.endswith((b"base64,", b"sha256-", b"sha512-", b"sha1-", b" h1:")):
        return False
    if _KEY_ALGORITHM.search(before):
        return False
    head = buf.rfind(b"-----BEGIN", ls, s)
    if head >= 0 and _PUBLIC_BLOCK.match(buf, head) and buf.find(b"-----END ", head, s) < 0:
        return False
    return True


#: Prefixes that name an identifier or a digest, not a credential, when a hex run,
#: an upper-case run or a UUID follows them (``commit-…``, ``session-<uuid>``).
_ID_PREFIXES = frozenset(
    b"sha sha1 sha256 sha384 sha512 md5 hash commit digest checksum etag blob tree oid object rev revision "
    b"build chunk cache integrity id uuid guid session agent req request trace span run job task order user "
    b"org tenant account project msg message event evt txn tx file doc item node pod container deploy release "
    b"test mock tmp temp version v image img layer volume vol snapshot instance vm host device key_id keyid "
    b"correlation idempotency batch thread conversation chat call toolu tool subscription sub cus customer "
    b"invoice price prod product pi ch ref".split()
)


def prefixed_body(buf: bytes, m, ctx) -> bool:
    """The ``prefixed_body`` check: a token with a provider-style prefix whose body
    is a hex run, an upper-case-and-digit run or a UUID — not an id or digest
    (``_ID_PREFIXES``, the harness ids), not a run of one or two characters, and
    (hex and upper-case bodies) of high entropy."""
    if m.start() > 0 and buf[m.start() - 1] in b"-_.$/":
        return False  # the tail of a longer name (a cache key's ...-0.7.13-<sha256>)
    prefix = buf[m.start() : m.start(1)]
    words = re.split(rb"[_.\-$]", prefix.lower().rstrip(b"_.-$"))
    if words[-1] in _ID_PREFIXES or words[0] in _ID_PREFIXES or prefix.lower() in HARNESS_ID_PREFIXES:
        return False
    if words[0].isdigit() and (words[0] == b"00" or len(words[0]) >= 9):
        # W3C traceparent's version (``00-<trace>-<span>-01``) or a Unix time before an id
        # (``1615850562.234312-<hex>``); Zoho's ``1000.`` is a token's own prefix
        return False
    body = m.group(1)
    if is_placeholder(body) or bad_checksum(m.group(0)):
        return False
    core = re.split(rb"[_.\-$]", body)
    longest = max(core, key=len)
    if len(longest) >= 20 and not re.fullmatch(rb"[0-9]+", longest):
        if re.fullmatch(rb"[0-9A-Z]+", longest):
            return len(re.findall(rb"[0-9]", longest)) >= 4 and len(re.findall(rb"[A-Z]", longest)) >= 4 \
                and entropy(longest) >= 3.8
        return entropy(longest) >= 3.3
    # a UUID body: five groups of hex
    return re.fullmatch(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", body) is not None
