"""Is this value a secret? The gates every provider and generic finding passes.

Three predicates, all pure over the candidate value's bytes:

- :func:`already_masked` — abcd's own mask: only ``*``, or the seal's shape (at most
  ``SEAL_HEAD`` + ``SEAL_TAIL`` = 5 bytes of the original around a run of stars). A
  rescan must not find its own output again.
- :func:`structure_only` — JSON punctuation, quotes, backslashes and blanks alone
  (``}]},``): the text around values, never a value. A pattern whose optional quote
  took a string's closing quote reads the structure after it as a value; masking
  it could not change the line (the JSON guard keeps structure), so it would be
  found again on every rescan and refuse a clean transcript.
- :func:`is_placeholder` — text that stands for a secret without being one, so a
  transcript keeps its meaning: documented example keys (AWS's, Stripe's, …), values
  that name themselves (``example``, ``placeholder``, ``your_…``, ``changeme``,
  ``dummy``, ``redacted``, or just ``password``), YAML tags (``!vault``), template references (``${VAR}``, ``$VAR``, ``{{ x }}``,
  ``<your-token>``, ``%(x)s``), and runs of one or two characters (``XXXX…``,
  ``****``, ``0000…``), and tokens that are structurally invalid: a GitHub
  (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``) or npm (``npm_``) token of its
  exact length whose CRC32 checksum does not match (:func:`bad_checksum`) — a
  fixture or a typo, never a credential GitHub or npm issued.
- :func:`looks_secret` — the generic detectors' shape and entropy gate: a value next
  to a secret-ish name is masked unless it reads as something else — a number, a
  version or a date, a boolean or null, a path or a URL, a code reference
  (``os.environ[...]``, ``getApiKey()``, ``self.token``), an identifier or word
  without a digit — or its Shannon entropy is too low for its length.
"""

from __future__ import annotations

import functools
import math
import re
import urllib.parse
import zlib

#: Documented example credentials (provider docs, SDK samples): never real.
EXAMPLE_SECRETS = frozenset({
    b"AKIAIOSFODNN7EXAMPLE",
    b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    b"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    b"AKIAI44QH8DHBEXAMPLE",
    b"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    b"pk_test_TYooMQauvdEDq54NiTphI7jx",
    b"xoxb-not-a-real-token-this-will-not-work",
    # jwt.io's sample token (HS256, "John Doe"), in every JWT tutorial
    b"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    b".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
})
#: Prefixes of keys that are public by design (Stripe's publishable keys ship to browsers).
PUBLIC_PREFIXES = (b"pk_live_", b"pk_test_")
#: Values that are the name of what they stand for (``postgres://user:password@``,
#: ``curl -u USERNAME:PASSWORD``), compared lower-case.
_SELF_NAMES = frozenset(b"password passwd passwort pass pwd secret token apikey api_key api-key username user "
                        b"mypassword yourpassword secretkey secret_key accesstoken access_token changeit test".split())
#: A user:password pair, alone or as a URL's userinfo: its password part.
_USER_PASSWORD = re.compile(rb"(?:^|//)[^:/@\s]{1,64}:([^:/@\s]{1,64})(?:@|$)")
#: A dotted path of identifiers holding a word (``X25519.KeyPair``, ``kVK_Return.u16``):
#: code, not a value — a secret's segments do not read as words.
_DOTTED_REF = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_WORD_RUN = re.compile(rb"[A-Z]?[a-z]{3,}")
#: YAML tags that stand where a value would (``password: !vault |``, ``!Ref``).
_YAML_TAG = re.compile(rb"(?i)!(?:vault|unsafe|ref|sub|getatt|join|select|split|base64|importvalue|findinmap|if|"
                       rb"equals|not|and|or|cidr|getazs|transform|condition|env|secret|include)")
#: Matched against the lower-cased value (faster than an ``(?i)`` search).
_NAMED = re.compile(
    rb"example|placeholder|your[_-]|your(?:own)?(?:api|access|secret|auth|app|token|key|pass|client|private)"
    rb"|changeme|change[_-]me|dummy|fake|redacted|replace[_-]?me|insert[_-]|<[^>]{1,64}>"
    rb"|%\([a-z_]+\)s|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_][A-Za-z0-9_]*%$|^xxx|xxxx|\.\.\.|\xe2\x80\xa6"
)
#: A template reference's body: ``${…}``, Ruby's ``#{…}`` and ``{{…}}`` (matched lower-case). It is a
#: reference only if that body is a well-formed expression (:func:`balanced`):
#: ``${DB_PASSWORD}``, ``${{ secrets.X }}``, ``{{ vault[\"k\"] }}`` are; the ``${e]nob(ody…}``
#: inside a punctuation-heavy password is not.
_TEMPLATE = re.compile(rb"[$#]\{\{?([^}]{1,64})\}|\{\{([^}]{0,64})\}\}")
_OPENERS, _CLOSERS = b"([{", b")]}"


def balanced(body: bytes) -> bool:
    """Every bracket in ``body`` closes in order and none is left open (quotes are
    not brackets): what any expression inside a template reference is."""
    stack = []
    for b in body.translate(None, bytes(c for c in range(256) if c not in b"()[]{}")):
        i = _OPENERS.find(b)
        if i >= 0:
            stack.append(i)
        elif not stack or stack.pop() != _CLOSERS.index(b):
            return False
    return not stack


def _templated(lowered: bytes) -> bool:
    """``lowered`` holds a template reference whose body is well-formed."""
    return any(balanced(m.group(1) if m.group(1) is not None else m.group(2)) for m in _TEMPLATE.finditer(lowered))
_NUMBERISH = re.compile(rb"[+-]?[0-9][0-9_.,:+eE/-]*[a-zA-Z]{0,3}")  # 1024, 1.2.3, 2024-01-01, 10ms
_WORDISH = re.compile(rb"[A-Za-z][A-Za-z_.:/-]*")  # words, identifiers, slugs without a digit
_CODE_REF = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(|\[|$)|.*\(\)?$|.*\[['\"]?$")
#: Values a password's name is often given that are not passwords: a path
#: (``/en/…/auth``, ``~/.pw``), an AWS resource name, a CSS id selector without a
#: digit (``#add-password``), an environment variable's expansion (``$BASE_URL/…``).
_NOT_A_PASSWORD = re.compile(rb"(?:/|~/|\./)[^/]*/|\.{1,2}/[\w.\-]+\.[A-Za-z0-9]{1,5}$|arn:aws|#[A-Za-z][A-Za-z_\-]*$|\$[A-Z_][A-Z0-9_]+(?:[/:.]|$)")


def not_a_password(value: bytes) -> bool:
    """``value`` (after a password's name) reads as a path, an ARN, a CSS id or an
    environment variable's expansion: what a name like ``addPassword`` is given in code."""
    return _NOT_A_PASSWORD.match(value) is not None
#: A digit anywhere in a value (the shape gates ask it of many values).
DIGIT = re.compile(rb"[0-9]")
_DIGIT_OR_SYMBOL = re.compile(rb"[0-9]|[^A-Za-z0-9_.-]")
_BRACKET = re.compile(rb"[\[\]]")
_LITERALS = frozenset({b"true", b"false", b"null", b"none", b"nil", b"undefined", b"yes", b"no", b"on", b"off"})


def already_masked(value: bytes) -> bool:
    """Only stars, or a seal (≤ 5 original bytes around a run of ≥ 4 stars)."""
    stars = value.count(b"*")
    if stars == len(value):
        return True
    return stars >= 4 and len(value) - stars <= 5 and b"****" in value


_STRUCTURE = b'{}[],:"\'`\\ \t'


def structure_only(value: bytes) -> bool:
    """Nothing but JSON punctuation, quotes, backslashes and blanks."""
    return not value.translate(None, _STRUCTURE)


@functools.lru_cache(maxsize=8192)  # pure; rules that share a value ask twice
def is_placeholder(value: bytes) -> bool:
    """A value that stands for a secret (documented, named, templated, a run, or a
    checksummed token whose checksum is wrong, a value that is its own name, a YAML tag)."""
    if value in EXAMPLE_SECRETS or (len(value) >= 4 and len(set(value)) <= 2):
        return True
    if value.strip(b"[]<>{}()'\"`").lower() in _SELF_NAMES or _YAML_TAG.fullmatch(value):
        return True
    pair = _USER_PASSWORD.search(value.strip(b"'\"`"))
    if pair is not None:
        pw = pair.group(1)
        if pw.strip(b"$[]<>{}()'\"").lower() in _SELF_NAMES or pw[:1] == b"$" or pw == pair.group(0).split(b":")[0].lstrip(b"/"):
            return True  # user:password, $USER:$PASS, neo4j:[PASSWORD], test:test
    lowered = value.lower()
    return _NAMED.search(lowered) is not None or _templated(lowered) or bad_checksum(value)


#: GitHub's and npm's token format: a prefix, 30 random base62 bytes, then the
#: CRC32 of those 30 as 6 base62 digits (github.blog, 2021-04-05; npm, 2021-09-23).
_CHECKSUMMED = re.compile(rb"(?:gh[pousr]|npm)_([A-Za-z0-9]{30})([A-Za-z0-9]{6})")
_BASE62 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_checksum(body: bytes) -> bytes:
    """The 6 base62 digits GitHub and npm append to a token's 30 random bytes."""
    n = zlib.crc32(body)
    out = bytearray()
    while n:
        n, r = divmod(n, 62)
        out.append(_BASE62[r])
    return bytes(reversed(out)).rjust(6, b"0")


def bad_checksum(value: bytes) -> bool:
    """``value`` is exactly a GitHub/npm token (prefix, 30 + 6 base62 bytes) and its
    last 6 bytes are not the checksum of the 30 before them."""
    m = _CHECKSUMMED.fullmatch(value)
    return m is not None and base62_checksum(m.group(1)) != m.group(2)


def entropy(value: bytes) -> float:
    """Shannon entropy in bits per byte: log2(n) - sum(k log2 k) / n over the byte counts."""
    n = len(value)
    if n == 0:
        return 0.0
    count = value.count
    acc = 0.0
    for b in set(value):
        k = count(b)
        acc += _KLOGK[k] if k < len(_KLOGK) else k * math.log2(k)
    return max(0.0, math.log2(n) - acc / n)


_KLOGK = [0.0] + [k * math.log2(k) for k in range(1, 4097)]


_LOWER, _UPPER, _DIGITS = bytes(range(97, 123)), bytes(range(65, 91)), bytes(range(48, 58))
_ALNUM_BYTES = _LOWER + _UPPER + _DIGITS


def _classes(v: bytes) -> int:
    """How many of lower case, upper case, digits and other bytes ``v`` holds."""
    n = len(v)
    return ((len(v.translate(None, _LOWER)) < n) + (len(v.translate(None, _UPPER)) < n)
            + (len(v.translate(None, _DIGITS)) < n) + (len(v.translate(None, _ALNUM_BYTES)) > 0))


_CASE_RUN = re.compile(rb"[a-z]+|[A-Z]+")


def random_letters(v: bytes) -> bool:
    """12+ letters of both cases with no lower-case run of 6 and at least two lone
    lower-case letters between capitals (``YfKlcxDMPYIyOZcN``): a random password
    without a digit. Words and identifiers, camelCase or not, put two or more
    lower-case letters after each capital (``getPasswordFromEnv``, ``ApiTokenValue``,
    ``XMLHttpRequest``)."""
    if len(v) < 12 or not v.isalpha() or v.islower() or v.isupper():
        return False
    lower = [r for r in _CASE_RUN.findall(v) if r.islower()]
    if any(len(r) >= 6 for r in lower) or sum(len(r) == 1 for r in lower) < 2:
        return False
    return entropy(v) >= 3.2


#: Lower-case words joined by ``/``, a file's extension or a route's ``#action`` after
#: them: a relative path or a route (``app/models/user.rb``, ``cms/sites/passwords#update``).
_RELATIVE_PATH = re.compile(rb"[a-z][a-z_\-]*(?:/[a-z][a-z_\-]*)+(?:\.[a-z0-9]{1,5})?(?:#[a-z_]+)?")


@functools.lru_cache(maxsize=8192)  # pure; rules that share a value ask twice
def looks_secret(value: bytes, min_len: int = 8, *, shape: bool = True, subscript: bool = True) -> bool:
    """The generic gate: ``value`` (taken after a secret-ish name) is worth masking.
    ``shape=False`` is for a context that says the value is a password whatever it
    looks like (``mysql -pVALUE``): only placeholders, literals, numbers, paths,
    references and runs of one or two characters pass; a word is masked.
    ``subscript=False``: a bracket is not read as a subscript (the caller has
    already told code from a value, ``punctuated``)."""
    v = value.strip(b"'\"`")
    if b"%" in v:  # judged as it reads: a percent-encoded ${VAR} is still a reference
        v = urllib.parse.unquote_to_bytes(v)
    if subscript and (b"[" in v or b"]" in v):  # a subscript (``keys[0]``) is judged by what precedes it
        head = _BRACKET.split(v, 1)[0]
        if not looks_secret(head, min_len, shape=shape):  # (subscript: this head has no bracket)
            return False
    if len(v) < min_len or is_placeholder(v) or v.lower() in _LITERALS:
        return False
    if _NUMBERISH.fullmatch(v) or (shape and _WORDISH.fullmatch(v) and not random_letters(v)):
        return False
    if v[:1] in b"/~.:" or b"://" in v or v.startswith(b"file:"):
        return False  # a path or a URL (URL credentials are their own rule)
    if _CODE_REF.match(v) and not DIGIT.search(v):
        return False  # os.environ, getApiKey(), self.token
    if shape and len(v) <= 64 and _DOTTED_REF.fullmatch(v) and _WORD_RUN.search(v):
        return False  # X25519.KeyPair, Ed25519.BlindKeySignatures: a reference with digits
    if v[:2] in (b"$(", b"${", b"%(") or v.startswith((b"ssh-", b"ecdsa-", b"sk-ssh-")):
        return False  # a command substitution, or a public key's algorithm name
    if _NOT_A_PASSWORD.match(v) or _RELATIVE_PATH.fullmatch(v):
        return False  # a path, an ARN, a CSS id (#add-password), $BASE_URL/…, a route: what code names so
    if v.startswith(PUBLIC_PREFIXES):
        return False
    if not shape:
        return v[:1] not in b"$<{" and len(set(v)) > 2
    classes = _classes(v)
    h = entropy(v)
    if len(v) >= 20:
        return h >= 3.0 and classes >= 2
    if len(v) < 12 and (h < 2.8 or not DIGIT.search(v)):
        return False  # short and repetitive (v2:hash0), or short without a digit (ul#models)
    return classes >= 2 and h >= 2.5 and (_DIGIT_OR_SYMBOL.search(v) is not None or random_letters(v))


#: A token's lead: its first run of 1-16 letters and digits and the ``_``/``-`` after it
#: (``toolu_`` of ``toolu_01Xk…``) — what :data:`HARNESS_ID_PREFIXES` is compared with.
TOKEN_LEAD = re.compile(rb"[A-Za-z0-9]{1,16}[_-]")

#: Prefixes of identifiers harnesses and APIs write into every transcript: random,
#: token-shaped, and not secret (a masked tool-use id would unlink its result).
HARNESS_ID_PREFIXES = frozenset({
    b"toolu_", b"srvtoolu_", b"msg_", b"req_", b"msgbatch_", b"file_", b"call_", b"run_", b"resp_",
    b"asst_", b"thread_", b"batch_", b"chatcmpl-", b"session_", b"agent-", b"sha1-", b"sha256-",
    b"sha384-", b"sha512-", b"org-", b"user_", b"evt_", b"cus_", b"prod_", b"price_", b"pi_", b"ch_",
})


#: Each byte as its class letter: U upper case, L lower case, D digit, O other.
_CLASS_OF = bytes(
    85 if 65 <= b <= 90 else 76 if 97 <= b <= 122 else 68 if 48 <= b <= 57 else 79 for b in range(256))
#: Every pair of two different class letters: a run ends where one of them occurs
#: (two different letters cannot overlap, so ``count`` finds every boundary).
_CLASS_CHANGES = tuple(bytes([a, b]) for a in b"ULDO" for b in b"ULDO" if a != b)


def class_profile(v: bytes) -> tuple[int, int, int, int]:
    """``(upper, lower, digits, runs)`` of ``v``: how many upper-case letters,
    lower-case letters and digits it holds, and how many maximal runs of one class
    (upper, lower, digit, other) it is made of. C-speed (one translate, counts):
    the shape checks ask it of every candidate token."""
    if not v:
        return 0, 0, 0, 0
    c = v.translate(_CLASS_OF)
    return c.count(b"U"), c.count(b"L"), c.count(b"D"), 1 + sum(map(c.count, _CLASS_CHANGES))


def random_shaped(body: bytes) -> bool:
    """A token body that reads as random, not as a name: 20+ bytes of base62 (with
    ``_``/``-``) holding upper- and lower-case letters and at least two digits, whose
    runs of one character class are short (random text changes class every couple
    of bytes; ``handlesUTF8EncodedInput2`` does not) and no lower-case run of 8."""
    if len(body) < 20 or is_placeholder(body):
        return False
    upper, lower, digits, runs = class_profile(body)
    if not upper or not lower or digits < 2:
        return False
    if len(body) / runs > 2.6 or re.search(rb"[a-z]{8}", body):
        return False
    # Its longest piece between separators is long: a model or package name
    # (Qwen3-Next-80B-A3B-Instruct) is short words joined, a token is not.
    if max(len(p) for p in re.split(rb"[_-]", body)) < 12:
        return False
    return entropy(body) >= 3.8
