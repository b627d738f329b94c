"""The bundled rule table (reference §3.2–3.8), as data: :data:`BUNDLED_RULES`.

Fixed prefixes, markers and identity/network kinds that every install has whatever
the maintained ruleset holds. Each rule's fields mean what ``rules`` says; each
carries positive and negative examples, run by ``tests/scanner/test_rules.py``.
"""

from __future__ import annotations

from .pem import PEM_REGEX
from .rules import HARD, PEM_KIND, WARN, Rule

# Example bodies (random, never real credentials).
_A36 = "u8jzPde0IgxLd6GncfBAepfJBd0Kh8024xXH"
_A40 = "KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFRIBXu"
_A20 = "kNhFdnXsiVpzz63FfkCz"
_A35 = "Jr4i0B3JrTAwR4y9ojfljoQoaF1LlqsajAI"
_HEX64 = "6a6f0fb23c6f5da2cec255404e4fb440034d6608697a8d41bed440e50454f31a"
_B64 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


def _gh(prefix: str, kind: str, label: str) -> Rule:
    return Rule(
        name=label, kind=kind, severity=HARD, keywords=(prefix,),
        regex=prefix + r"[A-Za-z0-9]{36,}",
        positive=(prefix + _A36, f'{{"t":"x\\n{prefix}{_A36}_old"}}', f"token={prefix}{_A40}"),
        negative=(prefix + _A20[:10], f"x{prefix}{_A36}", prefix + "short_token_name"),
    )


_SK_BODY = r"[A-Za-z0-9_-]{40,}"
_TRUNCATED_PREFIXES = (
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-or-v1-[a-f0-9]{20,}"
    r"|sk_(?:live|test)_[A-Za-z0-9]{20,}|xox[baprs]-[A-Za-z0-9-]{20,}|AIza[0-9A-Za-z_-]{20,}"
)

BUNDLED_RULES: tuple[Rule, ...] = (
    Rule(
        name="rp_session_key", kind="rp_session_key", severity=HARD, keywords=("sessionkey",),
        # The value's quote is escaped as deeply as the key's: after ``{\"sessionKey\":``
        # a bare quote closes the string holding it, and what follows is structure.
        regex=r'sessionKey(?:"[ \t]*:[ \t]*"|\\"[ \t]*:[ \t]*\\"|\\{3}"[ \t]*:[ \t]*\\{3}"|\\{7}"[ \t]*:[ \t]*\\{7}")'
              r'([^"\\\n]+)', group=1, boundary="", check="rp_session_key",
        positive=('{"sessionKey": "3f2a9c1e-77b0-4d5e-9a1b-2c3d4e5f6a7b"}',
                  '{"text":"{\\"sessionKey\\":\\"abc123def456\\"}"}'),
        negative=('{"sessionKey": "<RP-SESSION-UUID-REDACTED>"}', '{"mySessionKey": "x1"}',
                  "sessionKey is a field"),
    ),
    _gh("ghp_", "token:github_pat", "github_pat"),
    _gh("ghs_", "token:github_server", "github_server_token"),
    _gh("gho_", "token:github_oauth", "github_oauth"),
    _gh("ghu_", "token:github_user", "github_user_token"),
    _gh("ghr_", "token:github_refresh", "github_refresh"),
    Rule(
        name="github_pat_finegrained", kind="token:github_pat_finegrained", severity=HARD,
        keywords=("github_pat_",), regex=r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
        positive=("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",),
        negative=("github_pat_tokens are fine-grained", "github_pat_DL7DxtpYlSXpfKtHF4vUCs_short"),
    ),
    Rule(
        name="pem_private_key", kind=PEM_KIND, severity=HARD,
        keywords=("-----begin", "---- begin"), regex=PEM_REGEX, boundary="", reach=65536,
        positive=("-----BEGIN RSA PRIVATE KEY-----", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
                  f'{{"k":"-----BEGIN PRIVATE KEY-----\\n{_B64}\\n-----END PRIVATE KEY-----\\n"}}',
                  "-----begin openssh private key-----"),
        negative=("-----BEGIN CERTIFICATE-----", "-----BEGIN PUBLIC KEY-----", "BEGIN PRIVATE KEY"),
    ),
    Rule(
        name="anthropic_key", kind="token:anthropic", severity=HARD, keywords=("sk-ant-",),
        regex=r"sk-ant-" + _SK_BODY,
        positive=("sk-ant-api03-" + _A40, "key=sk-ant-" + _A40 + "-AA"),
        negative=("sk-ant-" + _A20[:12], "tusk-ant-" + _A40),
    ),
    Rule(
        name="openai_project_key", kind="token:openai_project", severity=HARD, keywords=("sk-proj-",),
        regex=r"sk-proj-" + _SK_BODY, positive=("sk-proj-" + _A40,), negative=("sk-proj-" + _A20[:15],),
    ),
    Rule(
        name="openai_service_account", kind="token:openai_svcacct", severity=HARD,
        keywords=("sk-svcacct-",), regex=r"sk-svcacct-" + _SK_BODY,
        positive=("sk-svcacct-" + _A40,), negative=("sk-svcacct-keys",),
    ),
    Rule(
        name="openai_admin_key", kind="token:openai_admin", severity=HARD, keywords=("sk-admin-",),
        regex=r"sk-admin-" + _SK_BODY, positive=("sk-admin-" + _A40,), negative=("sk-admin-panel",),
    ),
    Rule(
        name="openrouter_key", kind="token:openrouter", severity=HARD, keywords=("sk-or-v1-",),
        regex=r"sk-or-v1-[a-f0-9]{64}", positive=("sk-or-v1-" + _HEX64,),
        negative=("sk-or-v1-" + _HEX64[:10], "sk-or-v1-" + _A40),
    ),
    Rule(
        name="openai_legacy_key", kind="token:openai_legacy", severity=HARD, keywords=("t3blbkfj",),
        regex=r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", back=23,
        positive=("sk-" + _A20 + "T3BlbkFJ" + _A20[::-1],),
        negative=("sk-" + _A20 + "T3BlbkFX" + _A20, "T3BlbkFJ alone"),
    ),
    Rule(
        name="sk_key_generic", kind="token:sk_generic", severity=WARN, keywords=("sk-",),
        regex=r"sk-[A-Za-z0-9]{32,}", check="sk_generic",
        positive=("sk-" + _A36, "OPENAI_API_KEY=sk-" + _A40),
        negative=("sk-" + _A20, "sk-" + _A20 + "T3BlbkFJ" + _A20, "task-" + _A36),
    ),
    Rule(
        name="aws_access_key", kind="token:aws_access_key", severity=HARD,
        keywords=("akia", "asia", "abia", "acca", "a3t"),
        regex=r"(?:A3T[0-9A-Z]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}", check="aws_example",
        positive=("AKIAQYLPMN5HHHFPZAM2", "aws_access_key_id=ASIAZ7HJ3K9LMN0PQR4S"),
        negative=("AKIAIOSFODNN7EXAMPLE", "Asia/Tokyo", "XAKIAQYLPMN5HHHFPZAM2"),
    ),
    Rule(
        name="slack_token", kind="token:slack", severity=HARD,
        keywords=("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"), regex=r"xox[baprs]-[A-Za-z0-9-]{10,}",
        positive=("xoxb-1234567890-abcdefghij", "SLACK=xoxp-" + _A20),
        negative=("xoxb-short", "xoxz-1234567890-abcdefghij"),
    ),
    Rule(
        name="google_api_key", kind="token:google_api", severity=HARD, keywords=("aiza",),
        regex=r"AIza[0-9A-Za-z_-]{35}", positive=("AIza" + _A35, "key=AIza" + _A35[:34] + "-"),
        negative=("AIza" + _A20[:10], "Aizawa-san"),
    ),
    Rule(
        name="stripe_live_key", kind="token:stripe_live", severity=HARD, keywords=("sk_live_",),
        regex=r"sk_live_[A-Za-z0-9]{20,}", positive=("sk_live_" + _A20 + "x",),
        negative=("sk_live_mode", "is_live_" + _A20),
    ),
    Rule(
        name="stripe_test_key", kind="token:stripe_test", severity=HARD, keywords=("sk_test_",),
        regex=r"sk_test_[A-Za-z0-9]{20,}", positive=("sk_test_" + _A20 + "y",),
        negative=("sk_test_helper", "mask_test_" + _A20),
    ),
    Rule(
        # Shapes distinctive with no name beside them: a NuGet API key (``oy2`` and 43
        # lower-case base36), a Mailchimp key (32 hex and its datacenter, ``-us18``).
        name="nuget_api_key", kind="token:nuget_api_key", severity=HARD, keywords=("oy2",),
        regex=r"oy2[a-z0-9]{43}(?![a-z0-9])", positive=("oy2m15i9x4dmieg81iajrlg2fd5hwk0rkd3e1b237tpj5k",),
        negative=("oy2short", "boy2m15i9x4dmieg81iajrlg2fd5hwk0rkd3e1b237tpj5k"),
    ),
    Rule(
        # Atlassian's admin and service-account API tokens: ATCTT3xFfG, then 100+
        # (the ruleset knows ATATT… only); like ATATT… they end in ``=`` and 8 hex.
        name="atlassian_admin_token", kind="token:atlassian_admin", severity=HARD, keywords=("atctt3xffg",),
        regex=r"ATCTT3xFfG[A-Za-z0-9_\-]{90,}(?:=[0-9A-Fa-f]{8})?(?![A-Za-z0-9_=\-])",
        positive=("Using Key=ATCTT3xFfGN0GsZNgOGrQSHSnxiJVi00oHlRicyM0yMNuKCBfw6qOHVcCy4Hm89GnclGb_W-1qAkxqCn5"
                  "XbuyoX54bNhpK5yFKGFR7ocV6FByvL_P9Sb3tFnbUg3T3I3S_RGCBLMSN7Nsa4GJv8JE=366BFE3A",),
        negative=("ATCTT3xFfG-short", "the ATCTT3xFfG prefix"),
    ),
    Rule(
        # A Telegram bot token: the bot's id, a colon, then AA and 33 more (BotFather's format).
        name="telegram_bot_token", kind="token:telegram_bot", severity=HARD, keywords=(":aa",),
        regex=r"[0-9]{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])", anchor="0-9", back=10,
        positive=('bot = new Telegraf("9237436128:AAEjcQ6_jXzM3yAKoPN7bNQZCW7X1p-Ww7M")',),
        negative=("12345678:AAshort", "time 10:30:AAA"),
    ),
    Rule(
        name="mailchimp_api_key", kind="token:mailchimp_api_key", severity=HARD, keywords=("-us",),
        regex=r"[0-9a-f]{32}-us[0-9]{1,2}(?![0-9A-Za-z])", anchor="0-9a-f", back=32,
        positive=("2bbf5e0e59a222018afd9a0075b48820-us18", "apikey=2bbf5e0e59a222018afd9a0075b48820-us6"),
        negative=("2bbf5e0e59a222018afd9a0075b48820-user", "locale en-us"),
    ),
    Rule(
        # crypt(3) password hashes (/etc/shadow lines, htpasswd, database dumps).
        name="crypt_hash", kind="token:crypt_hash", severity=HARD,
        # (also Cisco's type 8 and 9, $8$ / $9$, and the PHC strings of argon2, scrypt, pbkdf2)
        keywords=("$1$", "$2a$", "$2b$", "$2y$", "$5$", "$6$", "$7$", "$8$", "$9$", "$y$", "$gy$", "$apr1$",
                  "$argon2", "$scrypt$", "$pbkdf2"),
        regex=r"\$(?:1|2[aby]|5|6|7|8|9|y|gy|apr1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha(?:1|256|512))?)\$[./A-Za-z0-9$=,+\-]{20,}",
        boundary="",
        positive=("root:$6$Xq3kL9pz$" + _A20 + _A36 + ":19000:0:99999:7:::",
                  "$2b$12$" + _A36 + "abcdefghijklmnopq",
                  "admin:$y$j9T$" + _A20 + "$" + _A20 + ":", "admin:$apr1$Rk3J9x2m$Zq8mR2kW4xT7pL9sYfKlc.",
                  "enable secret 8 $8$TnGX/fE4KGHOVU$pEhnEvxrvaynpi8j4f.EMHr6M.FzU8xnZnBr/tJdFWk",
                  "$argon2id$v=19$m=65536,t=3,p=4$" + _A20 + "$" + _A36),
        negative=("it costs $5$ each", "$6$short$x", "a $1$ bill and a $2b$ note"),
    ),
    Rule(
        # A JWT of any length: its window reaches 16 KiB (a token with many claims).
        name="jwt_shaped", kind="token:jwt_shaped", severity=HARD, keywords=("eyj",), reach=16384,
        regex=r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        positive=(_JWT, "Authorization: Bearer " + _JWT),
        negative=("eyJhbGciOiJIUzI1NiJ9", "eyJ.short.token", "keyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0.dozjgNryP4J3jVm"),
    ),
    Rule(
        # A prefixed token cut short (a log line truncated, a paste cut off): the
        # prefix and at least 20 characters are still a secret.
        name="truncated_prefixed_token", kind="token:truncated", severity=HARD,
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-ant-", "sk-proj-",
                  "sk-svcacct-", "sk-admin-", "sk-or-v1-", "sk_live_", "sk_test_",
                  "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "aiza"),
        regex=_TRUNCATED_PREFIXES,
        positive=("ghp_" + _A20, "sk-ant-api03-" + _A20, "AIza" + _A20 + "…", "github_pat_" + _A20 + "_x"),
        negative=("ghp_" + _A20[:12], "ghp_token_placeholder_value", "sk-ant-" + _A20[:8]),
    ),
    Rule(
        # Beyond the reference: a password assigned in plain text. Warn-level (it is
        # masked, never blocks); values that read as an identifier, a variable or a
        # placeholder are left alone (check "password_value").
        name="password_assignment", kind="secret:password_assignment", severity=WARN,
        keywords=("password", "passwd"),
        # (a value ends at ``&name=``, the next parameter of a query; a ``$`` inside it
        # is part of it, ``super$ecret`` — one it starts with is a reference)
        regex=r"""(?i:password|passwd)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?"""
              r"""([^\s"'\\<>{}()\[\]$,;`&](?:[^\s"'\\<>{}()\[\],;`&]|&(?![A-Za-z_][A-Za-z0-9_.\-]{0,40}=)){5,127})""",
        # gated without its stars-only values (abcd's own mask, never a finding)
        gate=r"""(?i:password|passwd)(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?[^\s"'\\<>{}()\[\],;`]*[^\s"'\\<>{}()\[\],;`*]""",
        group=1, boundary="", check="password_value", search="neighbourhood",
        positive=("password=hunter2!x", 'DB_PASSWORD: "s3cr3t-Pa55"', '{"cmd":"mysql --password=Tr0ub4dor&3"}',
                  "PGPASSWORD=YfKlcxDMPYIyOZcN psql -h db", 'password = "super$ecret9"'),
        negative=("password=password_input", "password: ${DB_PASSWORD}", "password = os.environ", '{"password": -10000}',
                  "password=********", "password = <your-password>", "password=getPasswordFromEnv"),
    ),
    Rule(
        # Beyond the reference: credentials in a URL's userinfo (scheme://user:pass@host).
        name="url_credentials", kind="secret:url_credentials", severity=HARD, keywords=("://",),
        # (a scheme of up to 32: ``postgresql+psycopg2``; the password runs to the last
        # ``@`` before the host, so one holding an ``@`` is masked whole; the user may
        # be empty: ``redis://:v@host``)
        regex=r"[A-Za-z][A-Za-z0-9+.-]{0,31}:(?:\\*/){2}[^\s/:@\"'<>\\]{0,128}:([^\s/\"'<>\\]{3,256})@",
        group=1, anchor="A-Za-z0-9+.-", back=32, check="url_password",
        positive=("postgres://app:Sup3rS3cret@db.internal:5432/app", "https://bob:tok3n-xyz@git.corp.dev/x.git",
                  "postgresql+psycopg2://app:Su7rK!x21@localhost/db", "https://deploy:D@3kQ9wM@pypi.example.com/simple",
                  "redis://:Xk29qLm7Tz4vBn8R@redis.example.com:6379/0"),
        negative=("https://github.com/owner/repo", "postgres://app:${PASSWORD}@db/app", "http://u:***@h"),
    ),
    Rule(
        # Keyed on the session path shape (not on "http", which every URL has): the
        # window looks back for the URL's scheme.
        name="harness_session_url", kind="harness:session_url", severity=HARD,
        keywords=("session_", "session/", "session=", "session-", "session\\/"), back=640,
        regex=r"https?:(?:\\*/){2}([A-Za-z0-9.-]{1,253})(?::\d+)?(?:\\*/[^\s\"'<>]{0,400}?)?[/_=-]?session(?:[_/=-]|\\/)(?:id=)?([A-Za-z0-9_-]{12,})",
        group=2, boundary="", check="session_url",
        positive=("see https://claude.ai/code/session_01HxQ7vK2mPq9RtZ8wYbN3cD",
                  "https://app.corp.dev/session/3f2a9c1e-77b0-4d5e-9a1b-2c3d4e5f6a7b"),
        negative=("https://example.com/session/3f2a9c1e-77b0-4d5e-9a1b-2c3d4e5f6a7b",
                  "https://docs.dev/session_management_guide", "https://x.dev/session/abcdefghijklmnop"),
    ),
    Rule(
        name="harness_attribution_footer", kind="harness:attribution_footer", severity=HARD,
        keywords=("generated with [", "generated by ["), back=12,
        regex=r"(?:\xf0\x9f\xa4\x96[ ]?)?[_*]{0,3}(?:\xf0\x9f\xa4\x96[ ]?)?[Gg]enerated (?:with|by) \[",
        boundary="", check="owns_line",
        positive=("🤖 Generated with [Claude Code](https://claude.com/claude-code)",
                  '{"m":"fix\\n\\n🤖 Generated with [Claude Code](https://claude.ai)\\n"}', "> - Generated by [Tool](x)"),
        negative=("The docs were generated with [mkdocs](https://x) today.", "Generated with mkdocs"),
    ),
    Rule(
        name="home_path_other", kind="home_path_other", severity=WARN,
        keywords=("/users/", "/home/", "/users\\", "/home\\", "%2fusers%2f", "%2fhome%2f"),
        regex=r"(?i:(?:/|%2f)(?:users|home)(?:\\*/|%2f)([A-Za-z0-9._-]+))", boundary="", check="home_other",
        positive=("/Users/grace/notes.md", '{"cwd":"/home/linus/src"}', '"\\/home\\/carl\\/x"',
                  "/Volumes/T7/Users/bob/y", "/mnt/backup/home/zed/x"),
        negative=("/Users/Shared/x", "/home/linuxbrew/.linuxbrew", "/Users/ada/x", "/usr/home/x/y",
                  "src/app/api/admin/users/route.ts", "GET /users/42"),
    ),
    Rule(
        name="home_path_other_windows", kind="home_path_other", severity=WARN,
        keywords=("\\users\\",), back=20,
        regex=r"[A-Za-z]:\\+(?i:Users)\\+([A-Za-z0-9._-]+)", boundary="", check="home_other",
        positive=("C:\\Users\\bob\\x", '{"p":"C:\\\\Users\\\\carol\\\\x"}'),
        negative=("C:\\Users\\Public\\x", "C:\\Users\\ada\\x"),
    ),
    Rule(
        # Beyond the reference: any e-mail address outside the documentation and
        # no-reply allow-list (the caller's own addresses are real_email, below).
        name="email_address", kind="email_address", severity=WARN, keywords=("@",),
        regex=r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}",
        anchor="A-Za-z0-9._%+-", back=64, boundary="", check="email",
        positive=("mail jane.doe@acme-corp.io now", '{"to":"ops+alerts@mail.bigco.com"}'),
        negative=("user@example.com", "noreply@anthropic.com", "git@github.com:o/r.git", "icon@2x.png",
                  "123+octo@users.noreply.github.com", "@types/node"),
    ),
    Rule(
        name="net_ipv4", kind="net:ipv4", severity=HARD,
        # Every address holds ".<second octet>." (1-3 digits): 1110 literals, far
        # fewer hits than a digit-dot-digit trigger (timestamps, decimals).
        keywords=tuple(f".{n:0{w}d}." for w in (1, 2, 3) for n in range(10**w)),
        regex=r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}", anchor="0-9.", back=16, reach=24,
        boundary="", check="ipv4", near=".", near_count=3,
        positive=("ssh 10.20.30.40", "host=8.8.8.8:53", '{"ip":"172.16.5.4"}'),
        negative=("192.0.2.10", "198.51.100.7", "127.0.0.1", "255.255.255.0", "1.2.3.4.5",
                  "10.0.0.0/8", "v1.2.3.4", "2025-06-14T10:22:33.123Z", "0.0.0.0"),
    ),
    Rule(
        name="net_ipv6", kind="net:ipv6", severity=HARD,
        keywords=("::",) + tuple(f"{a:x}:{b:x}" for a in range(16) for b in range(16)),
        regex=r"::[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){1,6}(?:(?:\.\d{1,3}){3})?|[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:(?:\.\d{1,3}){3})?",
        anchor="0-9A-Fa-f:.", back=48, reach=64, boundary="", check="ipv6", near=":", near_count=2,
        # The check takes only a match holding "::" or six or seven colons (a clock
        # time 10:22:33 is a regex match on nearly every transcript line).
        gate=r"::|[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){6}",
        positive=("2a01:4f8:c17:b8f::2", "[fd12:3456:789a::1]:80", "::ffff:10.1.2.3"),
        negative=("2001:db8::1", "::1", "fe80::1", "std::string::npos", "10:22:33", "2001:db8::/32"),
    ),
    Rule(
        name="net_mac", kind="net:mac", severity=HARD,
        keywords=tuple(f"{a:x}:{b:x}" for a in range(16) for b in range(16)),
        regex=r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}", anchor="0-9A-Fa-f:", back=24, reach=24, boundary="",
        check="mac", near=":", near_count=5,
        positive=("ether 3c:22:fb:1a:2b:3c", '{"mac":"3C:22:FB:1A:2B:3C"}'),
        negative=("00:00:5e:00:53:01", "3c:22:fb:1a:2b:3c:4d", "10:22:33.123", "a:b:c:d:e:f"),
    ),
    Rule(
        name="net_mac_dashed", kind="net:mac", severity=HARD,
        keywords=tuple(f"-{a:02x}-" for a in range(256)),
        regex=r"[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}", anchor="0-9A-Fa-f-", back=24, reach=24, boundary="",
        check="mac", near="-", near_count=4,
        positive=("MAC 3C-22-FB-1A-2B-3C here",),
        negative=("00-00-5E-00-53-01", "2025-06-14", "b4babe68-1aff-45d9-a1b9-b9d6d5aaaaa0", "3c-22-fb-1a-2b-3c-4d"),
    ),
    Rule(
        name="net_lan_hostname", kind="net:lan_hostname", severity=WARN, keywords=(".local", ".lan", "fritz.box"),
        regex=r"(?i)(?:_?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:local|lan)|(?:_?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*fritz\.box",
        anchor="A-Za-z0-9_.-", back=253, reach=16, boundary="", check="lan_host",
        positive=("ping nas-01.local", "http://printer.lan/admin", "fritz.box"),
        negative=("~/.local/bin", "settings.local.json", "alice-mac.local", "work.local", ".env.local",
                  "this.local = 1", "the.language"),
    ),
    Rule(
        name="net_device_hostname", kind="net:device_hostname", severity=WARN,
        keywords=tuple("-" + n for n in ("laptop", "macbook", "mbp", "imac", "thinkpad", "netbook", "chromebook", "nas")),
        regex=r"(?i)[a-z0-9][a-z0-9-]*-(?:laptop|macbook|mbp|imac|thinkpad|netbook|chromebook|nas)",
        anchor="A-Za-z0-9-", back=64, reach=16, boundary="", check="device_host",
        positive=("ssh dain-macbook", "host: jsmith-thinkpad."),
        negative=("alice-laptop", "my-laptop", "docker-desktop", "best-gaming-laptop-deals", "x-nasty"),
    ),
    # Identity rules: regex and keywords come from the caller's identity at build
    # time; the examples are written for EXAMPLE_IDENTITY.
    Rule(
        name="home_path_self", kind="home_path_self", severity=HARD, keywords=(), regex="",
        source="identity.home", boundary="", check="home_self",
        positive=("/Users/ada/x", "cd /Users/ada", "/Users/ada.zip", "/Users/ada-old/x", "/Users/ada_snapshot/x",
                  '{"p":"\\/Users\\/ada\\/x"}', "%2FUsers%2Fada%2Fx", "file:///Users/ada/x", "/USERS/ADA/x",
                  "/Volumes/T7/Users/ada/x"),
        negative=("/Users/adatoo/x", "/Users/ad/x"),
    ),
    Rule(
        name="real_email", kind="real_email", severity=HARD, keywords=(), regex="", source="identity.emails",
        boundary="", check="literal_alnum",
        positive=("by ada@lovelace.dev.", "ADA.WORK@CORP-MAIL.IO"), negative=("xada@lovelace.devx",),
    ),
    Rule(
        name="real_name", kind="real_name", severity=HARD, keywords=(), regex="", source="identity.names",
        boundary="", check="literal_alnum",
        positive=("Author: Ada Lovelace", "ada king was here"), negative=("Ada Lovelaces", "Ada", "Canada"),
    ),
    Rule(
        name="github_username", kind="github_username", severity=WARN, keywords=(), regex="",
        source="identity.github", boundary="", check="github_user",
        positive=("@adalove said", "https://github.com/adalove/other"),
        negative=("adalove/engine is the repo", "adaloves"),
    ),
    Rule(
        name="local_username", kind="local_username", severity=HARD, keywords=(), regex="",
        source="identity.user", boundary="", check="local_user",
        positive=("-Users-ada-workspace", "logged in as ada today", "ssh ada@host"),
        negative=("Canada", "adapter", "adamant"),
    ),
)

#: The identity the identity rules' examples are written for.
EXAMPLE_IDENTITY = dict(
    names=("Ada King", "Ada Lovelace", "adalove"),
    emails=("ada@lovelace.dev", "ada.work@corp-mail.io"),
    remote_user="adalove",
    remote_repo="engine",
    home="/Users/ada",
    user="ada",
)

BUNDLED_BY_NAME = {r.name: r for r in BUNDLED_RULES}
