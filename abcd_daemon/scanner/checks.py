"""Per-rule predicates: the lookarounds and context tests a regex cannot say.

Every predicate is ``check(buf, match, ctx) -> bool`` (True keeps the match), reads
only the match's own line around it (the line-locality contract), and never raises.
``ctx`` is the :class:`Context` of the scanner (the caller's home and repository).
The registry ``CHECKS`` is what a rule's ``check`` field names. The identity kinds'
predicates live in ``identity_checks``, the places that make a word a password in
``password_place``; the rest — a secret value's judgement after its name, a flag,
a sentence, a client, a token's shape — is here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from . import network
from .declared import declared_value
from .rules import value_group
from .secret_names import names_no_secret
from .password_place import config_value, line_password, names_password, password_place, password_word
from .punctuated import CODE, PROSE as _PROSE, punctuated_value, quoted_value, reads_as_password
from .shapes import bare_random, prefixed_body
from .values import (DIGIT, HARNESS_ID_PREFIXES, PUBLIC_PREFIXES, bad_checksum, is_placeholder, looks_secret,
                     not_a_password, random_letters, random_shaped)
from .identity_checks import (email, github_user, home_other, home_self, literal_alnum, local_user, owns_line,
                              session_url)

_AWS_EXAMPLE = b"AKIAIOSFODNN7EXAMPLE"
_RP_PLACEHOLDER = b"<RP-SESSION-UUID-REDACTED>"
_LEGACY_WHOLE = re.compile(rb"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\Z")
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_.-]*")
_PLACEHOLDER_VALUES = frozenset(
    b"changeme password passw0rd secret example redacted null none true false undefined your_password "
    b"yourpassword mypassword placeholder xxxxxx".split()
)


@dataclasses.dataclass(frozen=True)
class Context:
    home: bytes = b""
    home_single_segment: bool = False
    remote_repo: bytes = b""
    #: The home's last segment and the path before it, lower-cased.
    home_tail: bytes = b""
    home_root: bytes = b""


def rp_session_key(buf, m, ctx) -> bool:
    s = m.start()
    return s >= 1 and buf[s - 1] == 0x22 and _RP_PLACEHOLDER not in m.group(1)


def sk_generic(buf, m, ctx) -> bool:
    return not _LEGACY_WHOLE.match(m.group())


def aws_example(buf, m, ctx) -> bool:
    return m.group() != _AWS_EXAMPLE and not is_placeholder(m.group())


def password_value(buf, m, ctx) -> bool:
    value = m.group(1)
    between = buf[m.start() : m.start(1)]
    sep = max(between.find(b":"), between.find(b"="))
    if b'"' in between[:sep] and b'"' not in between[sep:]:
        return False  # "password": 12345678 — a JSON number or literal, not a string
    if value.lower() in _PLACEHOLDER_VALUES or len(set(value)) <= 2:
        return False  # a placeholder, or a mask like ******** / xxxxxxxx
    if _IDENT.fullmatch(value) and not DIGIT.search(value) and not random_letters(value):
        return False  # an identifier or attribute: password=password_input, os.environ
    if not_a_password(value):
        return False  # a path, an ARN, a CSS id, an environment variable's expansion
    return True


def url_password(buf, m, ctx) -> bool:
    value = m.group(1)
    return not (len(set(value)) <= 2 or value[:1] in b"$%{<" or b"{" in value)


def secret_value(buf, m, ctx) -> bool:
    """A generic detector's value passes the shape and entropy gate."""
    return looks_secret(m.group(1))


_BLANK_IN = re.compile(rb"\s")


def xml_secret(buf, m, ctx) -> bool:
    """An element's value passes the gate or reads as a password of punctuation; a
    braced one holding blanks (Jenkins' ``{AQAAABAAA …}``) is judged by its longest word."""
    value = m.group(1)
    if value.startswith(b"{") and _BLANK_IN.search(value):
        words = value[1:-1].split()
        return bool(words) and looks_secret(max(words, key=len))
    return looks_secret(value) or reads_as_password(value, quoted=True)


#: The identifier a prose rule's word ends (``public_key`` of ``public_key = …``).
_IDENT_BEFORE = re.compile(rb"[A-Za-z0-9_.\-]{1,64}$")


_QUOTE_BYTES = (b'"', b"'", b"`")
#: A setting (``sslmode=require``, ``charset=utf8``): a lower-case name, ``=``, a word.
_PARAMETER = re.compile(rb"[a-z_][a-z0-9_]{2,}=[A-Za-z0-9_.\-]*")
_QUERY_NEXT = re.compile(rb"&[A-Za-z_][\w.\-]*=")


def prose_secret(buf, m, ctx) -> bool:
    """A sentence naming a secret (or a table row: ``auth token | v``, 16 bytes at
    least, so a pipe into ``sha256sum`` is not one): the value must also carry a digit or a symbol, and
    a word that ends an identifier (``public_key = …``, ``key_id: …``) is judged by
    that identifier's name, as an assignment is."""
    # (judged up to a query string's next pair: ``?payload=key = settings.KEY&ref=cli``)
    value = _QUERY_NEXT.split(m.group(1), 1)[0]
    s = m.start()
    password = buf[s : s + 4].lower() == b"pass"
    if password and s and buf[s - 1 : s].isalnum():
        return False  # ``mypassword sslmode=…``: the end of another word, no sentence
    if _PARAMETER.fullmatch(value):
        return False  # ``… password sslmode=require``: the next setting, not the password
    quoted = buf[m.start(1) - 1 : m.start(1)] in _QUOTE_BYTES
    if CODE.match(value) or (not quoted and _constant(value)):
        return False  # ``token = get_token(user)``, ``token = TEST_DATA_BASE64``: code, not a sentence
    if password and quoted and password_word(value):
        return True  # the password is 'blooberry': a quoted word is the password itself
    if not (looks_secret(value) and re.search(rb"[0-9]|[^A-Za-z0-9]", value) is not None):
        return False
    if b"|" in buf[m.start() : m.start(1)] and len(value) < 16:
        return False  # a shell pipe (``echo $token | sha256sum``), not a table's cell
    before = _IDENT_BEFORE.search(buf, max(0, s - 64), s)
    return before is None or not names_no_secret(before.group() + buf[s : m.start(1)])


#: The flag and at most a quote before the value: ``-pVALUE``, ``-p'VALUE'``.
_GLUED_FLAG = re.compile(rb"-[paP]\\{0,3}[\"'`]?$")


#: Clients whose ``-p``/``-a``/``-P`` flag takes nothing but a password, spaced or not
#: (``psexec \\host -u admin -p dev_admin``); mysql's and psql's ``-p`` may not (a
#: prompt before a database name; a port).
_PASSWORD_ONLY_FLAG = re.compile(rb"(?i)sshpass|sqlcmd|mongo|redis-cli|psexec|paexec|user(?:add|mod)|rabbitmqadmin|[a-z]+ login")


def cli_password(buf, m, ctx) -> bool:
    """A client's password flag: short passwords count, a port number does not. A
    value glued to its flag, or after a client whose flag takes only a password, is a
    password whatever its shape (``mysql -p app`` names a database, ``-papp`` is a
    password), so only the shape gate's placeholders, references and numbers
    (``psql -p5432``, a port) pass it."""
    g = value_group(m)  # single-quoted, double-quoted or bare
    glued = _GLUED_FLAG.search(buf, m.start(), m.start(g)) is not None
    any_shape = glued or _PASSWORD_ONLY_FLAG.match(buf, m.start()) is not None
    return looks_secret(m.group(g), min_len=4, shape=not any_shape)




def literal_password(buf, m, ctx) -> bool:
    """A value whose place says it is a password (a call's or a statement's literal,
    a credential file's field): masked whatever its shape, unless it is a
    placeholder, a reference, a number, a path or words of prose. The value is the
    first capture group that took part (a rule may spell it quoted or bare)."""
    v = m.group(value_group(m))
    return looks_secret(v, min_len=4, shape=False) and _PROSE.fullmatch(v) is None


#: Words of English prose that no BIP-39 word list holds.
_NOT_SEED = frozenset(b"the and you your are for with that this when from have will can not was were they them "
                      b"their what which into our".split())


def seed_words(buf, m, ctx) -> bool:
    """A seed phrase: 12, 15, 18, 21 or 24 words, none of them common prose."""
    words = m.group(1).split()
    return len(words) in (12, 15, 18, 21, 24) and not any(w.lower() in _NOT_SEED for w in words)


def token_shaped(buf, m, ctx) -> bool:
    """A prefixed random token: not a harness id or a public key, not a checksummed
    token whose checksum is wrong, and its body reads as random."""
    prefix = buf[m.start() : m.start(1)].lower()
    if prefix in HARNESS_ID_PREFIXES or m.group().startswith(PUBLIC_PREFIXES):
        return False  # a harness id, or a key that is public by design
    return random_shaped(m.group(1)) and not bad_checksum(m.group(0))


#: The next line's name, read as the value of an empty one (``GITHUB_API_KEY=\n
#: DYNATRACE_API_KEY=``: the escaped newline is a blank in the spaced copy).
_NEXT_NAME = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[:=]|[a-z][a-z0-9]*(?:\.[a-z][a-z0-9]*)+[:=]")
#: A setting as a value: a lower-case name, ``=``, a word (never base64's ``…=`` padding).
_SETTING = re.compile(rb"[a-z_][a-z0-9_]{2,}=[A-Za-z_][A-Za-z0-9_.\-]*")
#: Maven-style coordinates ending in a version (``gax:2.16.0``, ``bigquery:v2-rev2022-1.32.1``).
_VERSIONED = re.compile(rb"[A-Za-z][\w.\-]*:v?[0-9][\w.\-]*\.[0-9]+")
#: An upper-case snake name (``_`` separates its parts: the match is linear).
_UPPER_SNAKE = re.compile(rb"_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _constant(value: bytes) -> bool:
    """``value`` is a constant's name (``TEST_ANOTHER_DATA_BASE64``): upper-case snake
    case with two words of three capitals at least."""
    if len(value) > 128 or _UPPER_SNAKE.fullmatch(value) is None:
        return False
    return sum(1 for part in value.split(b"_") if len(part) >= 3 and part[:3].isalpha()) >= 2


def _names_code(value: bytes) -> bool:
    """``value`` is a setting, a version coordinate or the next line's name, not a secret."""
    return bool(_NEXT_NAME.fullmatch(value) or _SETTING.fullmatch(value)
                or (len(value) <= 128 and _VERSIONED.fullmatch(value)))


def not_public(buf, m, ctx) -> bool:
    """``secret_value``, unless the name says the value is public (a public key) or
    is one of the names that hold ids rather than secrets (``"key"``, ``cache_key``);
    a word passes the value gate where its place says it is a password
    (``password_place``: a quoted literal, an environment line)."""
    name = buf[m.start() : m.start(1)]
    value = m.group(1)
    s, e = m.start(), m.end(1)
    if names_no_secret(name) or _names_code(value):
        return False  # (``authn_dbd_params => 'host=db_host …'``: a setting; ``api:api-common:2.1.1``: a version)
    if buf[e : e + 1] == b"(" or ((name[-1:] in b" \t" or value[:1] == b"_") and _constant(value)):
        # ``key: _GetAutodeleteOrNone(p)``, ``cred.token = TEST_DATA_BASE64``,
        # ``lifetime=_DEFAULT_TOKEN_LIFETIME``: code (an environment or .npmrc line,
        # ``_authToken=CUSTOM_TOKEN_123``, has no blank and no private ``_`` lead)
        return False
    if looks_secret(value):
        return True
    if s and buf[s - 1] == 0x2F:  # ``'/forgot-password' => "…"``: a route's path, not a name
        return False
    return password_place(name, value, buf[s - 1 : s] if s else b"", buf[e : e + 1])


#: Flags named for a key whose value is an id, a server or a file (``gpg --recv-keys``).
_ID_FLAG = re.compile(rb"(?i)--?(?:recv-keys?|keyserver|key-?server|key-?id|keyring|key-?file|key-?path|sign-key|"
                      rb"default-key|local-user|trusted-key|export-keys?|import-keys?|auth-?type|token-?file)\b")


def flag_value(buf, m, ctx) -> bool:
    """A command-line flag starts a word (``online-llm-tokenizer`` holds none) and is
    not one whose value names a key rather than holding one (``--recv-keys ID``); one
    named for a password (``--db-password``) takes a word (``password_place.password_word``)."""
    s = m.start()
    if s > 0 and buf[s - 1] not in b" \t\"'(=[" and not (s > 1 and buf[s - 2 : s] in (b"\\n", b"\\t")):
        return False
    if _ID_FLAG.match(buf, s):
        return False
    if looks_secret(m.group(1)):
        return True
    flag = buf[s : m.start(1)].rstrip(b" \t\"'`\\").lstrip(b"-")
    return names_password(flag) and password_word(m.group(1))  # --http-password hopenobody…


def cookie_value(buf, m, ctx) -> bool:
    """A cookie header with at least one value that passes the secret gate."""
    return any(looks_secret(v) for v in re.findall(rb"=([^;\s]{8,})", m.group(1)))


CHECKS: dict[str, Callable] = {
    "token_shaped": token_shaped,
    "bare_random": bare_random,
    "prefixed_body": prefixed_body,
    "cookie_value": cookie_value,
    "not_public": not_public,
    "flag_value": flag_value,
    "punctuated_value": punctuated_value,
    "declared_value": declared_value,
    "quoted_value": quoted_value,
    "secret_value": secret_value,
    "xml_secret": xml_secret,
    "prose_secret": prose_secret,
    "cli_password": cli_password,
    "literal_password": literal_password,
    "config_value": config_value,
    "line_password": line_password,
    "seed_words": seed_words,
    "rp_session_key": rp_session_key,
    "sk_generic": sk_generic,
    "aws_example": aws_example,
    "password_value": password_value,
    "url_password": url_password,
    "session_url": session_url,
    "owns_line": owns_line,
    "home_other": home_other,
    "home_self": home_self,
    "literal_alnum": literal_alnum,
    "github_user": github_user,
    "local_user": local_user,
    "email": email,
    "ipv4": network.check_ipv4,
    "ipv6": network.check_ipv6,
    "mac": network.check_mac,
    "lan_host": network.check_lan_host,
    "device_host": network.check_device_host,
}
