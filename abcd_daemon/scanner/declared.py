"""Generic detectors for a secret-named literal *declared* rather than assigned.

``generic.secret_assignment`` reads ``NAME = "v"``, ``NAME: v``, ``NAME := v``: the
value right after the operator. Code in most languages puts something between the
name and the literal, and then that rule sees a type or a call, never the literal:
a type annotation (TypeScript, Kotlin, Swift, Rust, Python), Go's ``var NAME TYPE =``,
a string prefix (Python ``r"…"``/``b"…"``/``f"…"``, C# ``@"…"``/``$"…"``, C++
``L"…"``/``u8"…"``), a wrapping constructor (Rust ``String::from("…")``, ``Some("…")``),
a C macro, R's ``<-``, a Lisp ``(def name "…")``, fish's ``set -gx NAME v`` or
Windows' ``setx NAME v``, a keyed setter (``headers.put("X-Api-Key", "…")``,
``os.setenv("API_TOKEN", "…")``).

Rules (all RE2, linear time; the masked span is group 1, the literal's content,
starred whole):
- ``typed_secret``: ``NAME: TYPE = [wrapper(][prefix]"v"`` and Go's ``var NAME TYPE = "v"``;
- ``wrapped_secret``: ``NAME = wrapper("v")`` / ``NAME = r"v"`` / ``NAME: Some("v")``;
- ``macro_secret``: ``#define NAME "v"`` (C, C++, Objective-C ``@"v"``);
- ``arrow_secret``: R's ``NAME <- "v"``, a Lisp ``(def NAME "v")`` / ``(setq NAME "v")``;
- ``shell_set_secret``: fish ``set -x NAME v`` (a flag at least), Windows ``setx NAME v``;
- ``named_pair``: a JSON name/value object, ``{"name": "DB_PASSWORD", "value": "v"}`` (a
  Kubernetes or ECS env entry, a HAR header or cookie named for a session);
- ``keyed_secret``: a setter's key then its value, ``put("NAME", "v")`` and the like;
Every value is judged by :func:`declared_value`.
"""

from __future__ import annotations

import re

from .forms import LIT, QO
from .password_place import names_password, password_word
from .punctuated import PROSE, reads_as_password
from .rules import GENERIC_SOURCE, WARN, Rule, value_group
from .secret_names import NAME, NAME_KEYWORDS, QUOTE, SECRET_WORDS, SEGMENT_WORDS, names_no_secret
from .values import looks_secret

_BARE = r"""([^\s"'`\\|;&<>()]{4,128})"""  # an unquoted shell word
#: A type annotation: a (Rust) reference and lifetime, then a type name with its
#: generics, pointers, arrays, optionals and unions — no ``=``, quote or call in it.
#: (A blank only around a union's ``|`` or after a generic's ``,``: ``Digest nonce`` is
#: a header's words, not a type.)
_TYPE = (r"(?:&(?:'[a-z_]+[ \t]+)?(?:mut[ \t]+)?)?[a-z_][a-z0-9_.:<>\[\]*?]{0,40}"
         r"(?:[ \t]?[|,][ \t]?[a-z_][a-z0-9_.:<>\[\]*?]{0,40}){0,3}")
#: A string literal's prefix: Python's raw, bytes, f- and unicode strings, C#'s verbatim
#: and interpolated strings, C++'s wide and UTF-8 strings, Objective-C's ``@``.
_PREFIX = r"(?:[rbfu]{1,2}|@|\$@?|@\$|l|u8)"
#: Constructors and conversions that wrap a literal without changing it.
_WRAP = (r"(?:string::from|string::new|some|ok|secretstring::(?:new|from)|secret::new|secretstr|secretbytes|"
         r"str|string|new[ \t]+string|buffer\.from|bytes|bytearray|qstring|std::string|nsstring|"
         r"securestring|sensitive|password|cstring)[ \t]*\([ \t]*")
_WORD = r"(?:" + "|".join(SECRET_WORDS + SEGMENT_WORDS) + ")"
_SETTERS = (r"(?:put|set|setenv|set_var|putenv|setitem|setproperty|setattr|add|append|insert|setdefault|"
            r"setenvironmentvariable|setheader|set_header|header|withheader|addheader|add_header|"
            r"setrequestheader|setrequestproperty|setvalue|setstring|putstring|store)")
#: Cookie and session names a HAR or a cookie jar gives a session's value by.
_SESSION_WORDS = ("session", "sess", "sid", "csrf", "xsrf")
_SESSION_NAME = r"[a-z0-9_.\-]{0,40}(?:" + "|".join(_SESSION_WORDS) + r")[a-z0-9_.\-]{0,40}"
_NAME_RX = re.compile(rb"(?i)" + NAME.encode() + rb"|" + _SESSION_NAME.encode())
_BLANK = re.compile(rb"\s")
#: An interpolating prefix and its quote just before a value (``f"``, ``$@"``, ``rf'``).
_INTERPOLATED = re.compile(rb"""(?i)(?:\b[rb]?f[rb]?|\$@?|@\$)\\{0,3}["'`]$""")
_PW = "Zq8mR2kW4xT7pL9s"

DECLARED_RULES: tuple[Rule, ...] = (
    Rule(
        name="typed_secret", kind="secret:declared", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)(?:" + NAME + r"[?!]?[ \t]{0,8}:[ \t]{0,8}" + _TYPE
              + r"|\b(?:var|const)[ \t]+" + NAME + r"[ \t]+[a-z_*\[\]][a-z0-9_.*\[\]]{0,40})"
              + r"[ \t]{0,40}=[ \t]{0,40}(?:" + _WRAP + r")?" + _PREFIX + r"?" + QO + LIT + QO,
        gate=r"(?i)" + _WORD + r"[a-z0-9_.\-]*(?:[?!]?[ \t]*:[ \t]*&?(?:'[a-z_]+[ \t]+)?[a-z_][^=\n\"'`(]*|[ \t]+[a-z_*\[\]][a-z0-9_.*\[\]]*)"
             + r"[ \t]*=[ \t]*(?:[a-z_:. ]+\([ \t]*)?[a-z@$0-9]*\\*[\"'`]",
        group=1, back=120, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'const apiKey: string = "{_PW}";', f"  private readonly clientSecret: string = '{_PW}';",
                  f'let secret: &str = "{_PW}";', f'const API_TOKEN: &\'static str = "{_PW}";',
                  f'val authToken: String = "{_PW}"', f'api_key: str = "{_PW}"', f'var apiKey string = "{_PW}"',
                  f'let token: String = String::from("{_PW}");', f'apiKey?: string | undefined = "{_PW}"',
                  f'tokens: Map<String, String> = "{_PW}"'),
        negative=("const apiKey: string = process.env.API_KEY!;", 'WWW-Authenticate: Digest nonce="6bf5d6e4da1ce66918800195d6b9130d"', "password: string;", 'tokenKey: string = "auth_token"',
                  'const API_KEY_HEADER: string = "X-Api-Key";', 'publicKey: string = "' + _PW + '"',
                  'password: str = "${DB_PASSWORD}"'),
    ),
    Rule(
        name="wrapped_secret", kind="secret:declared", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)" + NAME + QUOTE + r"\]?[ \t]{0,40}(?:=|:=|:|=>)[ \t]{0,40}(?:" + _WRAP + _PREFIX + r"?|"
              + _PREFIX + r")" + QO + LIT + QO,
        gate=r"(?i)" + _WORD + r"[a-z0-9_.\-]*" + QUOTE + r"\]?[ \t]*(?:=|:|=>)[ \t]*(?:[a-z_:. ]+\([ \t]*[a-z@$0-9]*|"
             + r"[a-z@$0-9]+)\\*[\"'`]",
        group=1, back=80, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'password = r"{_PW}"', f'SECRET_KEY = b"{_PW}"', f'var clientSecret = @"{_PW}";',
                  f'let secret = String::from("{_PW}");', f'api_key: Some("{_PW}".into()),',
                  f'token = f"{_PW}"'),
        negative=('token = f"{prefix}_{suffix}"', 'password = r"^[a-z]{8,}$"', 'api_key = str("")',
                  'secret = b"hello world"', 'token = bytes("YOUR_TOKEN")'),
    ),
    Rule(
        name="macro_secret", kind="secret:declared", severity=WARN, keywords=("define",),
        regex=r"(?i)#[ \t]*define[ \t]+" + NAME + r"[ \t]+(?:@|l|u8)?" + QO + LIT + QO,
        group=1, back=8, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        positive=(f'#define API_KEY "{_PW}"', f'#define kClientSecret @"{_PW}"'),
        negative=('#define API_KEY_HEADER "X-Api-Key"', '#define PASSWORD_PROMPT "Enter password: "'),
    ),
    Rule(
        name="arrow_secret", kind="secret:declared", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)(?:" + NAME + r"[ \t]{0,8}<<?-|\((?:def|defconst|defvar|defparameter|define|setq|setf|setv|set!)"
              r"[ \t]+" + NAME + r"|(?:^|[\s(])@" + NAME + r")[ \t]{1,40}" + QO + LIT + QO,
        gate=r"(?i)" + _WORD + r"[a-z0-9_.\-]*[ \t]*(?:<<?-[ \t]*|[ \t]+)\\*[\"'`]",
        group=1, back=80, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'api_key <- "{_PW}"', f'(def api-key "{_PW}")', f'(setq my-token "{_PW}")', f'  @api_key "{_PW}"'),
        negative=('api_key <- Sys.getenv("API_KEY")', '(def api-key (System/getenv "API_KEY"))'),
    ),
    Rule(
        name="shell_set_secret", kind="secret:declared", severity=WARN, keywords=("set",),
        regex=r"(?i)\b(?:set(?:[ \t]+-[a-z]{1,4}){1,3}|setx(?:[ \t]+/[a-z]{1,2})*|set[ \t]+\$)[ \t]*" + NAME + r"[ \t]+(?:" + QO + LIT + QO + "|" + _BARE
              + r")",
        group=1, back=8, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        positive=(f"set -gx OPENAI_API_KEY {_PW}", f'setx API_KEY "{_PW}"', f"set -x GITHUB_TOKEN {_PW}",
                  f"setx /M SERVICE_SECRET {_PW}", f"set $upstream_token '{_PW}';"),
        negative=("set -x API_KEY $API_KEY", "set -gx PASSWORD_STORE_DIR ~/.password-store", 'setx API_KEY ""'),
    ),
    Rule(
        # A JSON name/value object: a Kubernetes or ECS env entry, a HAR header or cookie
        # (``{"name": "DB_PASSWORD", "value": "…"}``, ``{"name": "sessionid", "value": "…"}``).
        name="named_pair", kind="secret:declared", severity=WARN, keywords=NAME_KEYWORDS + _SESSION_WORDS,
        regex=r"(?i)" + QUOTE + r"name" + QUOTE + r"[ \t]{0,8}:[ \t]{0,8}" + QUOTE + r"(?:" + NAME + r"|" + _SESSION_NAME
              + r")" + QUOTE + r"[ \t]{0,8},[ \t]{0,8}" + QUOTE + r"value" + QUOTE + r"[ \t]{0,8}:[ \t]{0,8}" + QO + LIT + QO,
        gate=r"(?i)name\\*[\"'`][ \t]*:[ \t]*\\*[\"'`][a-z0-9_.\-]*(?:" + _WORD + r"|session|sess|sid|csrf|xsrf)"
             r"[a-z0-9_.\-]*\\*[\"'`][ \t]*,[ \t]*\\*[\"'`]value",
        group=1, back=120, reach=600, boundary="", check="declared_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'{{"name": "DB_PASSWORD", "value": "{_PW}"}}', f'{{ "name": "sessionid", "value": "m0u5zkagb79q{_PW}" }}',
                  f'- {{"name":"API_KEY","value":"{_PW}"}}'),
        negative=('{"name": "API_KEY_HEADER", "value": "X-Api-Key"}', '{"name": "token_ttl", "value": "3600"}',
                  '{"name": "DB_PASSWORD", "value": "${DB_PASSWORD}"}', '{"name": "session_region", "value": "eu-west-1"}'),
    ),
    Rule(
        name="keyed_secret", kind="secret:declared", severity=WARN, keywords=NAME_KEYWORDS,
        regex=r"(?i)\b" + _SETTERS + r"[ \t]*\([ \t]*" + QO + NAME + QO + r"[ \t]*,[ \t]*" + QO + LIT + QO,
        gate=r"(?i)" + _SETTERS + r"[ \t]*\([ \t]*\\*[\"'`][a-z0-9_.\-]*" + _WORD,
        group=1, back=80, reach=420, boundary="", check="declared_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'headers.put("X-Api-Key", "{_PW}");', f'os.setenv("API_TOKEN", "{_PW}")',
                  f"Environment.SetEnvironmentVariable(\"CLIENT_SECRET\", \"{_PW}\")"),
        negative=('headers.put("X-Api-Key", apiKey);', 'os.setenv("API_TOKEN", "")', 'cache.set("cache_key", "' + _PW + '")',
                  'headers.set("Authorization", "Bearer ${token}")'),
    ),
)


def declared_value(buf, m, ctx) -> bool:
    """A declared literal (``DECLARED_RULES``): the secret-ish name nearest the value
    does not hold an id or a public value (``secret_names.names_no_secret``), and the
    value passes the value gate, or is a word after a name that ends with a password
    word (``password_place``: a string literal is its place), or punctuation that reads
    as a password (``punctuated.reads_as_password``) — never words and blanks alone."""
    g = value_group(m)  # (``shell_set_secret``: quoted, else bare)
    if m.start() and buf[m.start() - 1] in b"?&;":
        return False  # a query string's pair (``?a=A&amp;tokenb=B">…``): the URL rules' business
    names = _NAME_RX.findall(buf[m.start() : m.start(g)])
    if not names or names_no_secret(names[-1]):
        return False
    v = m.group(g)
    if b"{" in v and _INTERPOLATED.search(buf, max(0, m.start(g) - 6), m.start(g)):
        return False  # an f-string's or a C# $"…" string's {placeholders}: code, not a literal
    if PROSE.fullmatch(v.rstrip(b" :?.!")):
        return False  # a prompt or a message (``#define PASSWORD_PROMPT "Enter password: "``)
    ident = re.split(rb"[^A-Za-z0-9_.:\-]", names[-1].strip(b".:-"))[-1]
    if _BLANK.search(v):
        # words and symbols with blanks (``"PauseAction | KeyDownAction"``) are code or
        # prose; only a name that ends with a password word takes a phrase
        return names_password(ident) and password_word(v) and not PROSE.fullmatch(v)
    if looks_secret(v):
        return True
    return (names_password(ident) and password_word(v)) or reads_as_password(v, quoted=True)
