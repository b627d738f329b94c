"""Generic detectors for values the plain assignment rule cannot read: punctuation.

``generic.secret_assignment`` reads a value up to a blank, a quote or code
punctuation, so that ``token = getToken(a)`` and ``key: {`` never reach its gate.
A password is often made of exactly that punctuation (``m{{h}o)p${e]nob(ody…}}``,
``7`D'}/vYR)T;W\\5]EBrf…``, a backtick first). These rules take such a value whole, and
only such a value — one holding a byte :data:`PUNCT` names; any other is the plain
rule's — and judge it by :func:`reads_as_password`, which also turns away the code a
value of punctuation usually is.

Rules (all RE2, linear time; the masked span is the value, starred whole):
- ``quoted_secret``: after a secret-ish name (``secret_names``) and ``=``, ``:``,
  ``=>``, ``:=`` or a comparison (``==``, ``!==`` …), a quoted value (``"…"``, ``'…'``,
  ``\\`…\\```, ObjC ``@"…"``), a C array's ``[25]`` allowed after the name;
- ``quoted_secret_compared``: the same literal compared first (``"…" == password``);
- ``bare_secret``: after a name and ``=``, ``:``, ``=>`` or ``:=``, an unquoted value up
  to a blank (a trailing ``,``/``;`` is not the value's);
- ``xml_secret_attribute``: an element or attribute named for a secret holding its value
  in an attribute or its text — ``name="the_password" value="…"`` (either order),
  ``<the_password value="…"/>``, ``<entry name="token">…</entry>``.
A quoted value with a blank in it is not taken (``"open sesame"``: prose, a known limit).
Escaped text (a tool result's JSON string) is read through the decoded views, as
everywhere: these patterns see plain quotes.
"""

from __future__ import annotations

import re

import msgspec

from .rules import GENERIC_SOURCE, WARN, Rule, value_group
from .secret_names import NAME, NAME_KEYWORDS, QUOTE, SECRET_WORDS, SEGMENT_WORDS, names_no_secret
from .values import looks_secret

#: The bytes that make a value the business of these rules: those the plain rule's
#: value stops at (``generic._VALUE``), and any non-ASCII byte.
PUNCT = re.compile(rb"""[{}()<>\[\]\\,;&|'"`]|[\x80-\xff]""")
MIN_LEN, MAX_LEN = 6, 200
#: An identifier (two bytes at least) or a dotted path opening a call, a subscript, a
#: block or a type argument: ``hash(pw)``, ``tokens[i]``, ``Foo{…}``, ``req.headers.get(``,
#: a Rust macro's ``name!(``.
CODE = re.compile(rb"(?:[A-Za-z_$][\w$]+|[A-Za-z_$][\w$]*(?:(?:\.|\?\.|::|->)[A-Za-z_$][\w$]*)+)!?[(\[{<]")
#: What a regular expression's source holds and a password does not.
_REGEX = re.compile(rb"\\[dwsbDWSB]|\[[A-Za-z0-9]-[A-Za-z0-9]|\(\?[:=!<P]|[\])][*+?]|\{\d+(?:,\d*)?\}|\.[*+]|^\^")
#: What an unquoted value does not run on into: a query string's next pair
#: (``?api_key=v&q=1``: the plain rule takes the first), a list's or a statement's next
#: item (``a,key2=b``, ``0;for(let``, minified ``!0,readOnly:!0``), the end of a string
#: it stands inside (``AUTH_DOMAIN=google.com');``).
_RUNS_ON = re.compile(rb"&[A-Za-z_][\w.\-]*=|[;,][A-Za-z_#$]|['`][)\];,]")
#: Operators of an expression: an unquoted value holding one is code.
_OPERATOR = re.compile(rb"\|\||&&|\?\?|\?\.|=>|==|!=|\+\+|->|::")
_LOWER_RUN = re.compile(rb"[a-z]{4,}")
_BLANK = re.compile(rb"\s")
#: Words and blanks alone (``EOF in multi-line string``): prose, a prompt or a message,
#: never a password by itself.
PROSE = re.compile(rb"[A-Za-z][A-Za-z'-]*(?: [A-Za-z][A-Za-z'-]*)+")
#: A dotted path of identifiers, then what ends an argument (``_core.TrioToken)``,
#: ``winreg.HKEY_USERS,``): a reference in code.
_REFERENCE = re.compile(rb"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[)\],;}]")
#: An identifier in backticks (``:data:`h11.CLIENT```): a documentation reference.
_TICKED = re.compile(rb"`[\w.:\-]+`")


def reads_as_password(value: bytes, quoted: bool) -> bool:
    """``value`` (after a secret-ish name; ``quoted``: it was a string literal) is a
    secret made of punctuation. True only if it holds a :data:`PUNCT` byte and no blank
    (words with blanks are prose), is :data:`MIN_LEN`–:data:`MAX_LEN` bytes, is not code — a call, a subscript or a block
    (:data:`CODE`), a regular expression, a JSON object or array, and when unquoted
    no expression operator, nothing it runs on into (:data:`_RUNS_ON`), no ``$``/backtick start
    (a reference, a substitution), no bracket start (a tuple, list, set or dict
    literal), no dotted path ending an argument, no identifier in backticks —
    is not mostly lower-case words (identifiers are; a password's letter runs are
    short), and passes the value gate (``values.looks_secret``: placeholders, template
    references with a well-formed body, paths, URLs, low entropy)."""
    v = value if quoted else value.rstrip(b",;")
    if not MIN_LEN <= len(v) <= MAX_LEN or PUNCT.search(v) is None or _BLANK.search(v):
        return False
    if CODE.match(v) or _REGEX.search(v) or _json_container(v):
        return False
    if not quoted and (_OPERATOR.search(v) or _RUNS_ON.search(v) or v[:1] in b"$`([{"
                       or _REFERENCE.match(v) or _TICKED.search(v)):
        return False
    if sum(map(len, _LOWER_RUN.findall(v))) * 2 > len(v):
        return False
    return looks_secret(v, subscript=False)


def _json_container(v: bytes) -> bool:
    if v[:1] not in b"{[":
        return False
    try:
        msgspec.json.decode(v)
    except msgspec.DecodeError:
        return False
    return True


# The checks (``checks.CHECKS`` names them).
_TRAILING_IDENT = re.compile(rb"[A-Za-z0-9_.\-]+$")


def punctuated_value(buf, m, ctx) -> bool:
    """A ``punctuated`` rule's value: its name (before the value, or after it in
    ``"…" == password``) is not one that holds an id or a public value, and the value
    reads as a password (``punctuated.reads_as_password``)."""
    g = value_group(m)
    if m.start(g) > m.start():
        name = buf[m.start() : m.start(g)]
    else:  # the literal first: the name ends the match
        ident = _TRAILING_IDENT.search(buf, m.end(g), m.end())
        name = (ident.group() if ident is not None else b"") + b" ="
    if names_no_secret(name):
        return False
    quoted = m.start(g) > 0 and buf[m.start(g) - 1] in b"\"'`"  # (a bare value never follows a quote)
    return reads_as_password(m.group(g), quoted)


def quoted_value(buf, m, ctx) -> bool:
    """A string literal's or an attribute's content (``secret_call``,
    ``xml_secret_attribute``): what the value gate takes, or punctuation that reads as
    a password (a literal's bracket is not a subscript) — never words and blanks alone,
    a prompt."""
    v = m.group(value_group(m))
    if PROSE.fullmatch(v.rstrip(b" :?.!")):
        return False  # a prompt or a message (``password('New password: ')``)
    return looks_secret(v) or reads_as_password(v, quoted=True)


_OP = r"(?:=>|:=|\+=|\?=|===|!==|==|!=|=|:)"
#: A quoted value holding a PUNCT byte. A double quote may be JSON-escaped (up to
#: three times: a tool result's string), the value then ending before the escape;
#: JSON escapes neither ``'`` nor a backtick. (A backslash alone does not make a
#: double-quoted value punctuated: it may be the closing quote's escape.)
_QUOTED = (r'''\\{0,3}"([^"\s]{0,100}?[{}()<>\[\],;&|'`\x80-\xff][^"\s]{0,100}?)\\{0,3}"'''
           r"""|'([^'\s]{0,100}?[{}()<>\[\]\\,;&|"`\x80-\xff][^'\s]{0,100})'"""
           r"""|`([^`\s]{0,100}?[{}()<>\[\]\\,;&|"'\x80-\xff][^`\s]{0,100})`""")
_TAG = (r"[a-z0-9_.:\-]{0,40}(?:password|passwd|pwd|secret|token|api_?key|access_?key|private_?key|credentials?)"
        r"[a-z0-9_.:\-]{0,40}")
_AQ = r"""\\{0,3}["']"""  # an attribute's quote, plain or JSON-escaped
_ATTR_VALUE = r"""(?:\\{0,3}"([^"\n]{4,256}?)\\{0,3}"|'([^'\n]{4,256})')"""
#: The gates (``Rule.gate``): each rule's pattern from its name's word on, every
#: bounded repeat unbounded — a superset of its matches that Vectorscan runs faster
#: than the counted repeats (bench/redaction.py's gate time).
_WORD = r"(?:" + "|".join(SECRET_WORDS + SEGMENT_WORDS) + ")"
_TAG_WORD = r"(?:password|passwd|pwd|secret|token|api_?key|access_?key|private_?key|credential)"
_QUOTED_GATE = ('"' + r"""[^"\s]*[{}()<>\[\],;&|'`\x80-\xff]"""
                + r"""|'[^'\s]*[{}()<>\[\]\\,;&|"`\x80-\xff]|`[^`\s]*[{}()<>\[\]\\,;&|"'\x80-\xff]""")
_XML_KEYS = ("password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "accesskey", "access_key",
             "privatekey", "private_key", "credential")
_PW = "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}"

PUNCTUATED_RULES: tuple[Rule, ...] = (
    Rule(
        name="quoted_secret", kind="secret:punctuated", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)" + NAME + QUOTE + r"(?:\[[0-9]{0,6}\])?\]?[ \t]{0,40}" + _OP + r"[ \t]{0,40}@?(?:" + _QUOTED + ")",
        gate=r"(?i)" + _WORD + r"[a-z0-9_.\-]*" + QUOTE + r"(?:\[[0-9]*\])?\]?[ \t]*" + _OP + r"[ \t]*@?\\*(?:"
             + _QUOTED_GATE + ")",
        group=1, back=80, reach=420, boundary="", check="punctuated_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'apikey: "{_PW}"', "  jwtsecret: \"7`D'}/vYR)T;W\\5]EBrf;_&k>qX??]G&3CF=;@vyrVBp[$_hK4^?{qT\"",
                  "password = '`123QWERasdf'", f'if (api_key === "{_PW}") {{', f'char secrete[25] = "{_PW}";',
                  f'my_password_secure = @"{_PW}";', 'db_pass: "A,.:-\u00a8@*\u00bf?!"'),
        negative=('password = "${DB_PASSWORD}"', 'token = "(?:[A-Za-z0-9]{32})"', 'api_key: "{\\"a\\": 1}"',
                  'password = "getPassword(user)"', 'token = "{prefix}_{suffix}"', 'secret = "open sesame"',
                  'auth_header = "Bearer ${token}"', 'password_hint = "see (docs)"', 'key = "ctrl+shift+(p)"'),
    ),
    Rule(
        name="quoted_secret_compared", kind="secret:punctuated", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)(?:" + _QUOTED + r")[ \t]{0,8}(?:===?|!==?)[ \t]{0,8}" + NAME + r"\b",
        gate=r"(?i)[\"'`][ \t]*(?:===?|!==?)[ \t]*[a-z0-9_.\-]*" + _WORD,
        group=1, back=240, reach=120, boundary="", check="punctuated_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'if ("{_PW}" == password) {{', f'if ("{_PW}" !== my_private_key) {{'),
        negative=('if ("(none)" == token) {', 'if ("${PW}" == password) {'),
    ),
    Rule(
        name="bare_secret", kind="secret:punctuated", severity=WARN, keywords=NAME_KEYWORDS,
        gate=r"(?i)" + _WORD + r"[a-z0-9_.\-]*" + QUOTE + r"\]?[ \t]*(?:=>|:=|=|:)[ \t]*"
             + r"""[^\s"'`\\$(\[{][^\s"]*[{(\[<>&|\x80-\xff]""",
        regex=r"(?i)" + NAME + QUOTE + r"\]?[ \t]{0,40}(?:=>|:=|=|:)[ \t]{0,40}"
              # (what makes it punctuated is an opener, ``<>&|`` or non-ASCII: neither a
              # backslash nor a quote — one may escape the quote after it, the other close
              # a string the assignment stands in — nor a closer or a comma, which end JSON
              # numbers: ``"input_tokens":0},``; and it starts with none of ``([{``)
              + r"""([^\s"'`\\$(\[{][^\s"]{0,100}?[{(\[<>&|\x80-\xff][^\s"]{0,100}?)(?:['`]?\\*["\s]|['`]?$)""",
        group=1, back=80, reach=420, boundary="", check="punctuated_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f"apikey = {_PW}", f"db_pass: {_PW},", f"secret := {_PW}'"),
        negative=("password = hash(pw)", "token=tokens[i];", "api_key=process.env.KEY||'x'", "secret={SECRET}",
                  "TOKEN=$(cat ~/.token)", "password: getPassword(), // from the vault", "auth: [a,b]",
                  "key_map={k:v}", "token = req.headers.authorization?.split(' ')[1];",
                  "https://x.io/v1?api_key=Xk29qLm7Tz4vBn8RcW1yHs5d&q=(1)"),
    ),
    Rule(
        name="xml_secret_attribute", kind="secret:xml_attribute", severity=WARN, keywords=_XML_KEYS,
        regex=r"(?i)(?:\bname[ \t]*=[ \t]*" + _AQ + _TAG + _AQ + r"[^<>\n]{0,80}?\bvalue[ \t]*=[ \t]*" + _ATTR_VALUE
              + r"|\bvalue[ \t]*=[ \t]*" + _ATTR_VALUE + r"[^<>\n]{0,80}?\bname[ \t]*=[ \t]*" + _AQ + _TAG + _AQ
              + r"|<[ \t]*" + _TAG + r"\b[^<>\n]{0,80}?\bvalue[ \t]*=[ \t]*" + _ATTR_VALUE
              # (the element's text after a name attribute: ``<entry name="token">v</entry>``)
              + r"|\bname[ \t]*=[ \t]*" + _AQ + _TAG + _AQ + r"[ \t]*>[ \t]*([^<\n]{4,256}?)[ \t]*</" + ")",
        gate=r"(?i)value[ \t]*=|name[ \t]*=[ \t]*" + _AQ + r"[a-z0-9_.:\-]*" + _TAG_WORD,
        group=1, back=200, reach=420, boundary="", check="quoted_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'<sometag name="the_password" value="{_PW}" />', f"<sometag value='{_PW}' name='the_password_att'/>",
                  f'<the_password_tag value="{_PW}">something</the_password_tag>',
                  '<entry name="apiToken" value="Zq8mR2kW4xT7pL9s"/>', f'< sometag name="the_password" >{_PW}</sometag>'),
        negative=('<input name="password" value="" />', '<param name="token" value="${TOKEN}"/>',
                  '<field name="password_policy" value="strict"/>', '<the_password value="required"/>'),
    ),
)
