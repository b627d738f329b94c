"""What makes a name secret-ish: the words, and the regex spelling of such a name.

One definition for every generic detector that finds a value after a name
(``generic``, ``punctuated``) and for the checks that judge the name again
(``checks``, ``punctuated``), and which such names hold no secret
(:func:`names_no_secret`). A name is secret-ish when it contains one of :data:`SECRET_WORDS`, or
has one of :data:`SEGMENT_WORDS` as a whole segment (``azure_devops_pat``,
``--ext-pat``; never ``path`` or ``compat``), in any case and with any separator.
"""

from __future__ import annotations

import functools
import re

#: The words that make a name secret-ish (lower-case; matched case-insensitively).
SECRET_WORDS = ("key", "token", "secret", "pass", "pwd", "cred", "auth", "api", "psk")
WORDS = "(?:" + "|".join(SECRET_WORDS) + ")"
#: Short words that make a name secret-ish only as a whole segment of it.
SEGMENT_WORDS = ("pat", "pin", "otp", "pw")
SEGMENT = "(?:" + "|".join(SEGMENT_WORDS) + ")"
#: A separator between a name's segments.
SEP = r"[_.\-]"
#: A secret-ish name (for an ``(?i)`` pattern): identifier bytes around a word, or a
#: segment word between separators.
NAME = (r"(?:[a-z0-9_.\-]{0,64}" + WORDS + r"[a-z0-9_.\-]{0,64}"
        r"|(?:[a-z0-9_.\-]{0,64}" + SEP + r")?" + SEGMENT + r"(?:" + SEP + r"[a-z0-9_.\-]{0,64})?)")
#: Keywords of the segment words: the word and a separator on either side.
SEGMENT_KEYS = tuple(f"{sep}{w}" for w in SEGMENT_WORDS for sep in "_-.") + tuple(
    f"{w}{sep}" for w in SEGMENT_WORDS for sep in "_-")
#: The keywords every name-then-value rule is tried around.
NAME_KEYWORDS = SECRET_WORDS + SEGMENT_KEYS
#: An optional quote, plain or JSON-escaped up to three times.
QUOTE = r"""(?:\\{0,3}["'`])?"""

_FILE_NAME = re.compile(rb"\.([A-Za-z]{1,5})[\\\"'` \t]*[:=]")  # tokenizer.css: (grep output)
#: Names that end by saying the value is an id, a name, a place or a size of the
#: secret rather than the secret: ``credentialsId``, ``kms_key_id``, ``key_vault_name``,
#: ``SECRET_NAME``, ``token_file``, ``api_key_path``, ``key_length``.
_ID_WORDS = rb"(?:id|ids|name|names|file|path|dir|url|uri|type|length|len|size|count|version|ref|arn|algorithm|algo)"
_ID_SUFFIX = re.compile(rb"(?:(?i:[_.\-]" + _ID_WORDS + rb")|(?<=[a-z])(?:Id|Ids|Name|Names|File|Path|Dir|Url|Uri|Type|"
                        rb"Length|Size|Count|Version|Ref|Arn|Algorithm|Algo))[\\\"'`\]]*[ \t]*$")
#: Secret-ish names that hold identifiers, not secrets.
_ID_NAMES = frozenset({b"key", b"keys", b"primary_key", b"foreign_key", b"sort_key", b"cache_key", b"hash_key",
                       b"partition_key", b"range_key", b"key_id", b"keyid", b"file_key", b"idempotency_key",
                       b"api_version", b"api_url", b"api_base", b"author", b"authority", b"tokenizer",
                       b"token_type", b"auth_type", b"key_name", b"keyname", b"primarykey", b"foreignkey",
                       b"sortkey", b"hashkey", b"partitionkey", b"rangekey", b"cachekey", b"bucket_key", b"bucketkey",
                       b"schemakey", b"schema_key", b"issuerkeyhash", b"issuer_key_hash",
                       b"secwebsocketkey", b"sec_websocket_key"})  # (a WebSocket handshake's nonce)
_SECRET_WORD = re.compile("|".join(SECRET_WORDS).encode())
#: Words that hold a secret word without naming a secret (``keyword``, ``keyPressed``).
_OTHER_WORDS = re.compile(rb"(?i)key(?:words?|board|stroke|press(?:ed)?|down|up|frames?|space|ring|map|bind(?:ing)?s?|"
                          rb"codes?|chars?|str|_down_event)|(?:mon|tur|don|hoc|joc|whis)key|compass|bypass|passenger|passage|"
                          rb"author(?:s|ity|ization_url)?")
_PUBLIC_NAME = re.compile(rb"(?i)public|pub[_-]?key|publishable")


#: A dotted path of identifiers (``key_node.tag``, ``spring.datasource.password``).
_DOTTED = re.compile(rb"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_SEGMENT_WORD = re.compile(rb"(?:^|_)(?:" + "|".join(SEGMENT_WORDS).encode() + rb")(?:_|$)")
#: An attribute that holds what its object is: ``token.value``, ``secret.data``.
_VALUE_ATTRS = frozenset(b"value val data content text raw str string plain plaintext bytes hex b64 base64".split())


def _attribute_of(ident: bytes) -> bool:
    """``ident`` is a dotted path whose last attribute holds no secret word: the word
    names the object, and the value is another of its attributes (``key_node.tag``,
    ``credentials.username``; never ``db.password`` or ``token.value``)."""
    if _DOTTED.fullmatch(ident) is None:
        return False
    return not _holds_secret(ident.rsplit(b".", 1)[1].lower())


def _holds_secret(part: bytes) -> bool:
    """A lower-case name part that holds a secret word or a segment word, or is
    what holds its object's value (``value``, ``data``)."""
    return bool(_SECRET_WORD.search(part) or _SEGMENT_WORD.search(part) or part in _VALUE_ATTRS)


@functools.lru_cache(maxsize=4096)  # pure; a transcript repeats its names
def names_no_secret(name: bytes) -> bool:
    """The name (with its separator) says the value is public, an id, or a file:
    ``public_key``, ``credentialsId``, ``cache_key``, ``tokenizer.css:``, ``keyword``,
    or another attribute of a secret-named object (``key_node.tag``)."""
    head = name.split(b"=")[0].split(b":")[0]
    if _attribute_of(head.strip(b" \t\"'`\\?!+")):
        return True
    bare = re.sub(rb"[^a-z0-9_]", b"", head.lower().split(b"?")[0])
    rest = _OTHER_WORDS.sub(b"", bare)
    if rest != bare and not _SECRET_WORD.search(rest):
        return True  # its secret word is part of another word (keyword, validKeyChars)
    return bool(_PUBLIC_NAME.search(name) or bare.lstrip(b"_n") in _ID_NAMES or _file_name(name)
                or _ID_SUFFIX.search(head))


def _file_name(name: bytes) -> bool:
    """``tokenizer.css:`` (grep output): the name is a file's — unless its "extension"
    is itself a secret word or what holds one (``api.token =``, ``jwt.key:``, ``token.value``)."""
    m = _FILE_NAME.search(name)
    if m is None:
        return False
    return not _holds_secret(m.group(1).lower())
