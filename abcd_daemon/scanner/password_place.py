"""When an assignment's *place* says its value is a password, whatever its shape.

The generic value gate (``values.looks_secret``) lets a value of letters through as a
word: after ``password =`` in code, ``password_input`` or ``getpass`` is a variable,
not a password. These places take that doubt away, and there a word is masked
(``goodspec``, ``whiteduke``):

- a **quoted literal** — ``password = "goodspec"``, ``'password' => 'goodspec'``,
  ``:password => 'goodspec'``, ``"db_pass": "goodspec"`` (the quote, plain or
  JSON-escaped, stands right before the value): a string is not a variable;
- an **environment line** — ``DB_PASSWORD=goodspec``, ``export REACT_APP_AUTH_PASS=…``:
  an upper-case name, ``=`` with no blank, the bare value (a shell or ``.env``
  assignment; a reference would read ``$VAR``).
- a **connection string's pair** — ``Server=db;Uid=app;Pwd=goodspec;``: the name right
  after a ``;``, ``=`` with no blank, the value up to the next ``;`` or the end.
- a **YAML line** — ``  password: goodspec``: the name alone at its line's start (after
  blanks or a list's ``- ``), ``:`` and blanks, a lower-case word that ends the line
  (a JavaScript object's ``password: userInput,`` ends with a comma, or is camel-case).

Contract of :func:`password_place`: true only when the assignment's name *ends* with a
password word — ``pass``, ``password``, ``passwd``, ``pwd``, ``passphrase`` as its last
segment (``DB_PASSWORD``, ``dbPassword``, ``FromEmailPassword``; never
``PASSWORD_HASHER``, ``bypass`` or ``passwordField``) — the place is one of those
above, and the value is not a placeholder, literal, number, path or reference
(``looks_secret(shape=False)``) nor what code gives such a name (``not_a_password``:
``"#add-password"``, ``"arn:aws:…"``), not a word that describes a password field rather
than being one (:data:`FIELD_WORDS`: ``"password": "string"`` in an API schema) and
at least :data:`MIN_LEN` bytes. Pure; reads only the match.

:func:`config_value` judges a .NET ``<add key="…" value="…"/>`` entry (``forms``) the
same way: a key whose name ends with a password word takes a word; any other secret
name (``Stripe:ApiKey``) takes what the value gate takes.
"""

from __future__ import annotations

import re

from .values import looks_secret

#: The shortest word masked by its place alone (``hunter2`` is 7).
MIN_LEN = 6
#: The name's identifier (what precedes its quotes, blanks and operator).
_IDENT = re.compile(rb"[A-Za-z0-9_.\-]+")
#: A password word as the identifier's last segment: after a separator, at a camel-case
#: step (``dbPassword``), or the whole identifier.
_ENDS_PASSWORD = re.compile(rb"(?:^|[_.:\-])(?i:pass(?:word|wd|phrase)?|pwd)$|[a-z0-9]P(?:ass(?:word|wd|phrase)?|wd)$")
_UPPER_NAME = re.compile(rb"[A-Z][A-Z0-9_]*")
_QUOTES = b"\"'`"
#: A YAML key's separator; what may stand before a YAML key (a blank of its indent, a
#: list's dash, the line start) and after its value (the line end, blank, a comment).
#: (An escaped newline reaches a check as blanks: the generic rules read the spaced copy.)
_YAML_SEP = re.compile(rb":[ \t]+")
_YAML_LEAD = (b"", b" ", b"\t", b"\n", b"-")
_YAML_END = (b"", b" ", b"\t", b"\n", b"\r", b"#")
_LOWER_WORD = re.compile(rb"[a-z]{6,32}")
#: Words that say what a password field is, not what it holds: schema types and
#: validation states, hash names, where the value comes from.
FIELD_WORDS = frozenset(
    b"string str required optional hidden invalid incorrect empty sensitive masked encrypted plaintext plain "
    b"hashed bcrypt argon2 argon2id scrypt pbkdf2 sha256 sha512 boolean integer number object array "
    b"default unknown missing disabled enabled strong current confirm secure insecure prompt generate "
    b"generated random manual environment keychain keyring stdin interactive wrong expired".split()
)


def password_place(name: bytes, value: bytes, before: bytes = b"", after: bytes = b"") -> bool:
    """See the module contract. ``name`` is the match from its start to the value
    (identifier, quotes, blanks and operator); ``value`` the candidate; ``before`` the
    byte before the name and ``after`` the byte after the value (empty at an end)."""
    ident = _IDENT.match(name)
    if ident is None or not names_password(ident.group()):
        return False
    rest = name[ident.end():]
    quoted = rest[-1:] in _QUOTES if rest else False
    environment = rest == b"=" and _UPPER_NAME.fullmatch(ident.group()) is not None
    pair = rest == b"=" and before == b";" and after in (b";", b"")
    yaml = (_YAML_SEP.fullmatch(rest) is not None and before in _YAML_LEAD and after in _YAML_END
            and _LOWER_WORD.fullmatch(value) is not None)
    if not (quoted or environment or pair or yaml):
        return False
    return password_word(value)


def names_password(ident: bytes) -> bool:
    """``ident`` (a name, a flag without its dashes, a config key) ends with a password
    word as its last segment (see the module contract)."""
    return _ENDS_PASSWORD.search(ident) is not None


def password_word(value: bytes) -> bool:
    """A value that a password's place makes a password (see the module contract):
    also what a sentence quotes after "the password is" (``checks.prose_secret``)."""
    # (looks_secret also refuses what code gives such a name: values.not_a_password)
    if len(value) < MIN_LEN or value.lower() in FIELD_WORDS:
        return False
    return looks_secret(value, MIN_LEN, shape=False)


#: The key's name in a ``<add key="…" value="…"/>`` entry.
_KEY_ATTR = re.compile(rb"""(?i)key[ \t]*=[ \t]*\\{0,3}["'`]([^"'`\\]*)""")


def config_value(buf: bytes, m, ctx) -> bool:
    """The ``config_entry`` check (see the module docstring)."""
    key = _KEY_ATTR.search(m.group(0))
    value = m.group(1)
    if key is not None and names_password(key.group(1)):
        return password_word(value)
    return looks_secret(value)


_DIGIT_OR_SYMBOL = re.compile(rb"[0-9]|[^A-Za-z0-9]")


def line_password(buf: bytes, m, ctx) -> bool:
    """The ``password_line`` check: a line that is only ``password v`` holds the
    password when ``v`` is a password word (:func:`password_word`) holding a digit or a
    symbol — ``password reset`` and ``password required`` are prose."""
    value = m.group(1)
    # (a sentence's full stop is no symbol: "… the username and password combination.")
    return password_word(value) and _DIGIT_OR_SYMBOL.search(value.rstrip(b".,;:!?")) is not None
