"""Our generic detectors: what no provider rule can know (DESIGN §3.4, layer 2).

A secret without a provider's prefix is still recognisable by where it stands:
after a secret-ish NAME — one containing key, token, secret, pass, pwd, cred, auth
or api, in any case and with any separator — in every syntax a transcript carries,
or in a header, a command line or a sentence that says what it is. Each rule here
finds the candidate; the value gate (``values.looks_secret``, through the checks
``secret_value`` / ``prose_secret``) decides, so words, numbers, dates, paths, code
references and placeholders pass untouched.

Rules (all RE2, linear time; the masked span is group 1, the value; values are
starred whole, since their name still matches after masking):
- ``secret_assignment``: ``NAME=v``, ``export NAME=v``, ``NAME := v``, ``"name": "v"``
  (also JSON-escaped once, twice or three times), YAML ``name: v``, ``--name=v``,
  ``Password=v;`` / ``Pwd=v`` / ``AccountKey=v`` in connection strings, ``?api_key=v&``;
- ``secret_flag``: ``--name v`` and ``-name v`` (space-separated command-line flags);
- ``cli_password``: ``mysql … -pVALUE`` / ``-p VALUE``, ``sshpass -p``, ``redis-cli -a``,
  ``sqlcmd -P`` — a password flag of a client that takes one;
- ``auth_header``: ``Authorization: Bearer|Basic|token|… v`` (any scheme, or none);
- ``bearer_token``: a bare ``Bearer v`` (curl arguments, logs);
- ``prose_secret``: "the password is v", "my API key: v", "token was v";
- ``jwt_base64``: a JWT wrapped in base64 (``ZXlK…``, the encoding of ``eyJ``).
URL userinfo in any scheme and JWTs of any length are bundled rules
(``url_credentials``, ``jwt_shaped``).
"""

from __future__ import annotations

from .rules import WARN, Rule

GENERIC_SOURCE = "generic"
#: The words that make a name secret-ish (lower-case; matched case-insensitively).
SECRET_WORDS = ("key", "token", "secret", "pass", "pwd", "cred", "auth", "api")
_WORDS = "(?:" + "|".join(SECRET_WORDS) + ")"
_NAME = r"[a-z0-9_.\-]{0,64}" + _WORDS + r"[a-z0-9_.\-]{0,64}"
_Q = r"""(?:\\{0,3}["'`])?"""  # a quote, plain or JSON-escaped up to three times
_VALUE = r"""([^\s"'`\\,;<>(){}\[\]&|]{6,256})"""
_CLIENTS = ("mysql", "mariadb", "sshpass", "sqlcmd", "mongo", "redis-cli", "isql", "pg_dump", "psql")

_A40 = "Xk29qLm7Tz4vBn8RcW1yHs5dJf3gPa6eUo0iKl2M"

GENERIC_RULES: tuple[Rule, ...] = (
    Rule(
        name="secret_assignment", kind="secret:assignment", severity=WARN, keywords=SECRET_WORDS,
        regex=r"(?i)" + _NAME + _Q + r"[ \t]{0,4}(?:=>|:=|\+=|=|:)[ \t]{0,4}" + _Q + _VALUE,
        group=1, back=80, reach=420, boundary="", check="secret_value", source=GENERIC_SOURCE,
        positive=("DB_PASS=hunter2-Xk29!q", f"export STRIPE_KEY={_A40}", f'{{"api_key": "{_A40}"}}',
                  f'{{"t":"{{\\"client_secret\\": \\"{_A40}\\"}}"}}', f"aws_secret: {_A40}",
                  f"Server=db;Uid=app;Pwd=Zq8!mR2#kW;", f"DefaultEndpointsProtocol=https;AccountKey={_A40}==;",
                  f"https://api.x.io/v1?api_key={_A40}&q=1"),
        negative=("password_policy=strict", "token_count=1024", "api_version: 2024-01-01", "auth: true",
                  "API_KEY=${API_KEY}", "api_key=your_api_key_here", "password = os.environ",
                  "secret_file=/etc/app/secret.txt", "KEY_NAME=SECRET_KEY_NAME", "api_key = <your-key>"),
    ),
    Rule(
        name="secret_flag", kind="secret:flag", severity=WARN, keywords=SECRET_WORDS,
        regex=r"(?i)--?" + r"[a-z0-9_.\-]{0,40}" + _WORDS + r"[a-z0-9_.\-]{0,40}[ \t]+" + _Q + _VALUE,
        group=1, back=48, reach=380, boundary="", check="secret_value", source=GENERIC_SOURCE,
        positive=(f"deploy --api-token {_A40}", "vault login --password 'Tr0ub4dor-77x'"),
        negative=("--token-file ~/.config/x", "--auth-type basic", "--api-version 2024-01-01", "--password-stdin"),
    ),
    Rule(
        name="cli_password", kind="secret:cli_password", severity=WARN, keywords=_CLIENTS,
        regex=r"(?i)(?:" + "|".join(_CLIENTS) + r")[a-z0-9_-]*[^\n|;&]{0,200}?[ \t](?:-p|-a|-P)[ \t]?"
              + _Q + r"""([^\s"'`\\|;&]{4,128})""",
        group=1, reach=420, boundary="word", check="cli_password", source=GENERIC_SOURCE,
        positive=("mysql -u root -pZq8mR2kW4 app", "sshpass -p 'Tr0ub4dor77' ssh host", "redis-cli -a s3cr3tPw9 ping"),
        negative=("mysql -u root -p app", "mysql -P 3306 -h db", "psql -p 5432 -U app"),
    ),
    Rule(
        name="auth_header", kind="secret:auth_header", severity=WARN, keywords=("authorization",),
        regex=r"(?i)(?:proxy-)?authorization" + _Q + r"[ \t]{0,4}[:=][ \t]{0,4}" + _Q
              + r"(?:(?:bearer|basic|token|bot|digest|apikey|api-key|sso-key|key|negotiate|hmac|splunk|ghp|"
                r"aws4-hmac-sha256)[ \t]+)?([A-Za-z0-9._~+/:,=\-]{8,})",
        group=1, reach=4200, boundary="", check="secret_value", source=GENERIC_SOURCE,
        positive=(f"Authorization: Bearer {_A40}", "-H 'authorization: Basic dXNlcjpQYXNzdzByZCE='",
                  f'{{"Authorization":"token {_A40}"}}'),
        negative=("Authorization: Bearer $TOKEN", "authorization: required", "Authorization: Bearer <token>"),
    ),
    Rule(
        name="bearer_token", kind="secret:bearer", severity=WARN, keywords=("bearer ",),
        regex=r"(?i)bearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)",
        group=1, reach=4200, boundary="word", check="secret_value", source=GENERIC_SOURCE,
        positive=(f"curl -H Bearer {_A40}",), negative=("a bearer token is required", "Bearer ${TOKEN}"),
    ),
    Rule(
        name="prose_secret", kind="secret:prose", severity=WARN,
        keywords=("password", "passphrase", "passcode", "passwd", "pwd", "secret", "token", "key", "credential"),
        regex=r"(?i)(?:password|passphrase|passcode|passwd|pwd|secret|token|api[ _-]?key|access[ _-]?key|key|"
              r"credentials?)[ \t]+(?:is|was|are|=|:)[ \t]+(?:now[ \t]+|set[ \t]+to[ \t]+)?[\"'`]?"
              r"([^\s\"'`]{5,127}[^\s\"'`.,;:!?)])",
        group=1, back=24, reach=200, boundary="", check="prose_secret", source=GENERIC_SOURCE,
        positive=("the password is hunter2-Xk29!q", f"my API key is {_A40}", "token was Zq8mR2kW4xT7."),
        negative=("the token is valid", "the password is required.", "the key is `config.api_key`"),
    ),
    Rule(
        name="jwt_base64", kind="token:jwt_base64", severity=WARN, keywords=("zxlk",),
        regex=r"ZXlK[A-Za-z0-9+/]{60,}={0,2}", boundary="word", reach=16384, source=GENERIC_SOURCE,
        positive=("ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4TWpNME5UWTNPRGt3SW4wLmRvempnTnJ5UDRKM2pWbU5IbDB3NQ==",),
        negative=("ZXlKaGJHY2k=",),
    ),
)

#: Kinds whose value is starred end to end (its name still matches after masking).
WHOLE_STAR = frozenset(r.kind for r in GENERIC_RULES if r.kind.startswith("secret:"))
