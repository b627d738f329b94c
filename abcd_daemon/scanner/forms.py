"""Generic detectors for the forms code, commands and credential files give a secret.

``generic`` finds a value after a secret-ish name in an assignment, a flag, a header
or a sentence. Transcripts also carry passwords where no assignment stands: handed
to a call or a constructor, declared as a constant or a property, typed into a SQL
or PowerShell statement, piped into a login, written in a credential file's own
line format, or said in a language other than English. Each rule here names the
form it reads; the masked span is group 1, the value, starred whole.

Rules (all RE2, linear time):
- ``secret_call``: ``setPassword("v")``, ``withApiKey('v')`` — a call whose name holds
  a secret word, its first argument a string literal (judged by the value gate: a
  getter's argument, ``getToken("refresh")``, is a word);
- ``credential_pair``: ``NetworkCredential("user", "v")``, ``HTTPBasicAuth(u, "v")``,
  ``auth=("user", "v")``, ``ftp.login("user", "v")`` — the second of a user/password pair;
- ``smtp_auth``: Go's ``smtp.PlainAuth("", "user", "v", host)``, ``gomail.NewDialer(h, p, "user", "v")``;
- ``jwt_signing_secret``: ``jwt.sign(payload, "v")``, ``jwt.encode(payload, "v", …)``;
- ``directory_entry``: ``DirectoryEntry("LDAP://…", "user", "v")`` — the third of a triple;
- ``wallet_key``: ``new ethers.Wallet("0x<64 hex>")`` — a wallet's private key;
- ``define_secret``: PHP ``define('DB_PASSWORD', 'v')``, WordPress's ``AUTH_KEY`` salts;
- ``property_secret``: C# ``public string Password { get; set; } = "v";``;
- ``secure_string``: PowerShell ``ConvertTo-SecureString "v" -AsPlainText``;
- ``sql_password``: ``IDENTIFIED BY 'v'`` (MySQL, Oracle, MariaDB);
- ``stdin_password``: ``echo 'v' | docker login --password-stdin``;
- ``htpasswd_batch``: ``htpasswd -b[c] FILE USER v`` and ``htpasswd -nb USER v``;
- ``pgpass_line``: a ``.pgpass`` line, ``host:port:db:user:v``;
- ``netrc_password``: a ``.netrc`` entry, ``machine H login U password v``, on one line;
- ``password_line``: a line that is only ``password v`` (a multi-line ``.netrc`` entry,
  Gradle's ``password 'v'``), judged by ``password_place.line_password``;
- ``curl_user``: ``curl -u user:v`` / ``--user user:v``;
- ``prose_secret_intl``: "Das Passwort … lautet v", "mot de passe : v", "密码：v" —
  the word for password in 20 languages, a separator or a copula, then a value
  holding a digit or a symbol (``checks.prose_secret``);
- ``config_entry``: .NET ``<add key="SmtpPassword" value="v"/>`` (``appSettings``), the
  key's name holding a secret word (``password_place.config_value``);
- ``seed_phrase``: ``MNEMONIC="…"`` and "recovery phrase: …" — 12, 15, 18, 21 or 24
  lower-case words (``checks.seed_words``).
A value read as a password by its position (a call's, a pair's, a statement's) is
judged by ``checks.literal_password``: placeholders, references, numbers and prose
pass; a word is masked, since its place says what it is.
"""

from __future__ import annotations

from .rules import GENERIC_SOURCE, WARN, Rule

QO = r"""\\{0,3}["'`]"""  # an opening or closing quote, plain or JSON-escaped up to three times
#: A quoted literal's content: up to its quote, never across one or a line.
LIT = r"""([^"'`\\\n]{4,256})"""
_BARE = r"""([^\s"'`\\|;&<>]{4,128})"""  # an unquoted shell word
_SECRETISH = r"(?:password|passwd|passphrase|secret|token|api_?key|auth_?key|access_?key|credentials?)"
#: The word for "password" in the languages a transcript is likely to carry (the
#: prefilter folds ASCII only: a capitalised Cyrillic word is its own keyword). The
#: pattern holds characters outside Latin-1, so it is compiled from its UTF-8 bytes
#: (``linear.compile_linear``) and every word matches as the UTF-8 a transcript holds.
_PW_WORDS = ("passwort", "kennwort", "mot de passe", "contraseña", "contrasena", "senha", "wachtwoord", "hasło",
             "haslo", "parola", "lösenord", "losenord", "salasana", "heslo", "şifre", "sifre", "jelszó", "пароль",
             "Пароль", "密码", "密碼", "パスワード", "비밀번호", "mật khẩu", "clave de acceso")
#: Separators and copulas between the word and the value: a colon (ASCII or full
#: width), "=", or "is" in those languages.
#: (A copula in a spaced language stands between blanks: ``\b`` is ASCII-only, and a
#: non-ASCII letter has no boundary; CJK copulas have no blanks at all.)
#: An escaped copula after an ASCII word (``senha \u00e9``) is spelled out: no
#: escaped word triggers a view of that line.
_COPULA = (r"(?::|：|=|[ \t](?:lautet|ist|est|es|é|is|jest|är|on|это|\\u00e9|\\u00e4r)[ \t]|是|为|為|は|는)")
#: The non-ASCII words as a JSON encoder that escapes non-ASCII spells them
#: (``\u5bc6\u7801``; Python's ``json.dumps`` does, Claude Code does not): view
#: triggers (``prefilter``), so such a line is also read decoded.
VIEW_TRIGGERS: tuple[bytes, ...] = tuple(dict.fromkeys(
    "".join(c.lower() if c.isascii() else f"\\u{ord(c):04x}" for c in w).encode() for w in _PW_WORDS if not w.isascii()))
_SEED_NAME = r"(?:mnemonic|seed[ _-]?phrase|recovery[ _-]?phrase|secret[ _-]?phrase|wallet[ _-]?seed|seed[ _-]?words)"

_PW = "Zq8mR2kW4xT7"

FORM_RULES: tuple[Rule, ...] = (
    Rule(
        name="secret_call", kind="secret:call", severity=WARN,
        keywords=("password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "authkey", "auth_key",
                  "accesskey", "access_key", "credential"),
        regex=r"(?i)\b[a-z0-9_]*" + _SECRETISH + r"[a-z0-9_]*[ \t]*\([ \t]*" + QO + LIT + QO + r"[ \t]*[,)]",
        group=1, back=64, reach=400, boundary="", check="quoted_value", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'dataSource.setPassword("p6Xk!{_PW}#T");', 'std::string secret("m{{h}o)p${e]nob(ody[finds>-_$#thisone}}");', f"client.withApiKey('{_PW}Qa')",
                  f'{{"content":"ds.setPassword(\\"{_PW}\\")"}}'),
        negative=('ds.setPassword(System.getenv("DB_PASSWORD"))', 'setPassword("")', 'getToken("refresh")',
                  'validatePassword("password")', 'setPassword("${DB_PASSWORD}")'),
    ),
    Rule(
        name="credential_pair", kind="secret:credential_pair", severity=WARN,
        keywords=("credential", "passwordauthentication", "basicauth", "digestauth", "auth", "login"),
        regex=r"(?i)\b(?:[a-z]*credentials?|passwordauthentication|usernamepassword[a-z]*|http(?:basic|digest)auth|"
              r"basicauth|auth|login|authenticate|simple_bind_s|bind_s)[ \t]*[(=][ \t]*\(?[ \t]*" + QO + r"[^\"'`\\\n]{1,64}" + QO + r"[ \t]*,[ \t]*"
              + QO + LIT + QO,
        group=1, back=64, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        search="neighbourhood",
        positive=(f'new NetworkCredential("svc-backup","Sp!{_PW}5$")', f'requests.get(u, auth=("admin", "{_PW}"))',
                  f"HTTPBasicAuth('deploy', 'hunter2-{_PW}')", f'ftp.login("backup", "{_PW}x")',
                  f"server.login('noreply@acme.io', 'Sm{_PW}')"),
        negative=('auth=("admin", os.environ["PW"])', 'new NetworkCredential("svc", "")',
                  'auth=("user", "password")'),
    ),
    Rule(
        # .NET's ``DirectoryEntry(path, user, password)``: the third of a path/user/password triple.
        name="directory_entry", kind="secret:credential_pair", severity=WARN, keywords=("directoryentry",),
        regex=r"(?i)\bdirectoryentry[ \t]*\([ \t]*" + QO + r"[^\"'`\\\n]{1,256}" + QO + r"[ \t]*,[ \t]*" + QO
              + r"[^\"'`\n]{1,64}" + QO + r"[ \t]*,[ \t]*" + QO + LIT + QO,
        group=1, reach=600, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'New-Object DirectoryServices.DirectoryEntry("LDAP://10.0.0.1","domain\\user", "{_PW}")',
                  f'new DirectoryEntry("LDAP://EXAMPLE.COM", "ADMIN@EXAMPLE.COM", "Rr{_PW}");'),
        negative=('new DirectoryEntry("LDAP://EXAMPLE.COM", user, password);', 'new DirectoryEntry("LDAP://x", "u", "")'),
    ),
    Rule(
        # An Ethereum wallet built from its private key: ``new ethers.Wallet("0x…")``.
        name="wallet_key", kind="secret:wallet_key", severity=WARN, keywords=("wallet",),
        regex=r"(?i)\bwallet[ \t]*\([ \t]*" + QO + r"((?:0x)?[0-9a-f]{64})" + QO,
        group=1, reach=200, boundary="", check="secret_value", source=GENERIC_SOURCE,
        positive=('const w = new ethers.Wallet("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318");',),
        negative=('new ethers.Wallet("0x' + "0" * 64 + '")', "new Wallet(privateKey)"),
    ),
    Rule(
        # A line that is only ``password v``: a multi-line .netrc entry, a Gradle
        # ``credentials {}`` block (``password 'v'``), a space-separated config.
        name="password_line", kind="secret:netrc", severity=WARN, keywords=("password", "passwd"),
        # (the generic rules read the spaced copy, where a JSON string's escaped newline
        # is two blanks: a line there starts after two blanks or the string's quote)
        regex=r"(?i)(?:^|\"|[ \t]{2})[ \t]{0,40}(?:password|passwd)[ \t]+(?:" + QO + r")?([^\s\"'`\\]{4,128})(?:"
              + QO + r")?(?:[ \t]*$|[ \t]{2}|\\{1,3}\")",
        # Its gate: the word, blanks and the value's first bytes. (Vectorscan 5.4 misses
        # ``(?:"|[ \t]{2})[ \t]{0,40}password`` on some lines RE2 matches — a JSON line
        # ``"content": "see:  password …"`` — which test_gate's JSON case caught.)
        gate=r"(?i)(?:password|passwd)[ \t]+\\*[\"'`]?[^\s\"'`\\]{4}",
        group=1, back=48, reach=200, boundary="", check="line_password", source=GENERIC_SOURCE,
        positive=("  password pass123", "password hunter22"),
        negative=("password required", "  password reset", "  password combination.", "password $NETRC_PASSWORD", "password ********",
                  "enter the password pass1234 to log in"),
    ),
    Rule(
        # Go's SMTP auth: ``smtp.PlainAuth(identity, user, password, host)`` and
        # ``gomail.NewDialer(host, port, user, password)``.
        name="smtp_auth", kind="secret:credential_pair", severity=WARN, keywords=("plainauth", "newdialer"),
        regex=r"(?i)\b(?:plainauth[ \t]*\([ \t]*" + QO + r"[^\"'`\\\n]{0,64}" + QO + r"[ \t]*,|newdialer[ \t]*\("
              r"[^()\n]{0,200}?,)[ \t]*" + QO + r"[^\"'`\\\n]{1,64}" + QO + r"[ \t]*,[ \t]*" + QO + LIT + QO,
        group=1, back=16, reach=500, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'auth := smtp.PlainAuth("", "noreply@shop.io", "{_PW}a1", "smtp.mailgun.org")',
                  f'd := gomail.NewDialer("smtp.office365.com", 587, "noreply@acme.io", "{_PW}b2")'),
        negative=('auth := smtp.PlainAuth("", user, pass, host)', 'smtp.PlainAuth("", "u@x.io", os.Getenv("PW"), h)'),
    ),
    Rule(
        # A JWT's signing secret as a literal: ``jwt.sign(payload, "…")``, ``jwt.encode(p, "…", …)``.
        name="jwt_signing_secret", kind="secret:jwt_secret", severity=WARN, keywords=("jwt.",),
        regex=r"(?i)\bjwt\.(?:sign|encode|verify|decode)[ \t]*\([^\n]{0,200}?,[ \t]*" + QO + LIT + QO,
        group=1, back=8, reach=500, boundary="", check="quoted_value", source=GENERIC_SOURCE,
        positive=(f'const token = jwt.sign({{ sub: user.id }}, "{_PW}c3", {{ expiresIn: "1h" }});',
                  f"jwt.encode(payload, '{_PW}d4', algorithm='HS256')"),
        negative=('jwt.sign(payload, process.env.JWT_SECRET)', 'jwt.encode(payload, key, algorithm="HS256")',
                  'jwt.sign({ role: "admin" }, secret)'),
    ),
    Rule(
        name="define_secret", kind="secret:define", severity=WARN, keywords=("define",),
        regex=r"(?i)\bdefine[ \t]*\([ \t]*" + QO + r"[a-z0-9_]*(?:password|passwd|pwd|secret|token|key|salt|auth)"
              r"[a-z0-9_]*" + QO + r"[ \t]*,[ \t]*" + QO + LIT + QO,
        group=1, back=8, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"define('DB_PASSWORD', 'Pa{_PW}!');",
                  "define('AUTH_KEY', 'x#9<Kq!]mZ@4r$Lw^2&Tn*8(Vb)0-Ys_=Pe+3{Hc}6|Jd~1`Ga.5;Ux?7');"),
        negative=("define('DB_PASSWORD', '');", "define('AUTH_KEY', 'put your unique phrase here');",
                  "define('WP_DEBUG', true);", "define('DB_PASSWORD', getenv('DB_PASSWORD'));"),
    ),
    Rule(
        name="config_entry", kind="secret:config_entry", severity=WARN, keywords=("<add",),
        regex=r"(?i)<add[ \t]+key[ \t]*=[ \t]*" + QO + r"[a-z0-9_.:\-]{0,64}" + _SECRETISH + r"[a-z0-9_.:\-]{0,64}" + QO
              + r"[ \t]+value[ \t]*=[ \t]*" + QO + LIT + QO,
        group=1, reach=700, boundary="", check="config_value", source=GENERIC_SOURCE,
        positive=('<add key="FromEmailPassword" value="Prestigitariu$"/>', f'<add key="Stripe:ApiKey" value="{_PW}x9"/>'),
        negative=('<add key="SmtpPassword" value=""/>', '<add key="TokenAudience" value="myapp"/>',
                  '<add key="ApiKeyHeader" value="X-Api-Key"/>', '<add key="TokenLifetimeMinutes" value="60"/>'),
    ),
    Rule(
        name="property_secret", kind="secret:property", severity=WARN, keywords=("get;",),
        regex=r"(?i)\b[a-z0-9_]*(?:password|passwd|secret|token|api_?key|connectionstring)[a-z0-9_]*[ \t]*\{[ \t]*"
              r"get;[^}\n]{0,40}\}[ \t]*=[ \t]*" + QO + LIT + QO,
        group=1, back=120, reach=300, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'public string Password {{ get; set; }} = "{_PW}!";',),
        negative=('public string Password { get; set; } = "";', 'public string Password { get; set; } = string.Empty;'),
    ),
    Rule(
        name="secure_string", kind="secret:secure_string", severity=WARN, keywords=("convertto-securestring",),
        regex=r"(?i)convertto-securestring[ \t]+(?:-string[ \t]+)?" + QO + LIT + QO,
        group=1, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'$pw = ConvertTo-SecureString "Ad{_PW}5" -AsPlainText -Force',),
        negative=("ConvertTo-SecureString $env:PW -AsPlainText -Force", 'ConvertTo-SecureString "$pw" -AsPlainText'),
    ),
    Rule(
        name="sql_password", kind="secret:sql_password", severity=WARN, keywords=("identified",),
        regex=r"(?i)\bidentified[ \t]+(?:with[ \t]+[a-z0-9_]+[ \t]+)?by[ \t]+(?:password[ \t]+)?" + QO + LIT + QO,
        group=1, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"CREATE USER 'app'@'%' IDENTIFIED BY 's1{_PW}@4';",
                  f"ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY '{_PW}';"),
        negative=("CREATE USER 'app'@'%' IDENTIFIED BY '${APP_PW}';", "IDENTIFIED BY ''"),
    ),
    Rule(
        name="stdin_password", kind="secret:stdin_password", severity=WARN, keywords=("--password-stdin",),
        regex=r"(?i)\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?(?:" + QO + r")?" + _BARE + r"(?:" + QO + r")?[ \t]*\|"
              r"[^|\n]{0,160}?--password-stdin",
        group=1, back=400, reach=40, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"echo 'le{_PW}22' | docker login -u me --password-stdin ghcr.io",
                  f"echo {_PW} | podman login --password-stdin quay.io"),
        negative=("echo $CR_PAT | docker login ghcr.io -u me --password-stdin",
                  'echo "${TOKEN}" | helm registry login --password-stdin x.io'),
    ),
    Rule(
        name="htpasswd_batch", kind="secret:htpasswd", severity=WARN, keywords=("htpasswd",),
        regex=r"\bhtpasswd(?:[ \t]+-[A-Za-z]+)*?[ \t]+-[A-Za-z]*b[A-Za-z]*(?:[ \t]+-[A-Za-z]+)*"
              r"(?:[ \t]+[^\s\"'`\\|;&<>-][^\s\"'`\\|;&<>]*)?[ \t]+[^\s\"'`\\|;&<>-][^\s\"'`\\|;&<>]*[ \t]+"
              r"""(?:'([^'\\\n]{4,128})'|"([^"\\\n]{4,128})"|""" + _BARE + ")",
        group=1, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"htpasswd -b -c /etc/nginx/.htpasswd admin Su{_PW}4!", f"htpasswd -nb admin {_PW}",
                  "htpasswd -bB .htpasswd monitor 'Ember+Ash#2023'"),
        negative=("htpasswd -c /etc/nginx/.htpasswd admin", "htpasswd -B -c .htpasswd admin"),
    ),
    Rule(
        name="pgpass_line", kind="secret:pgpass", severity=WARN, keywords=(":5432:", ":*:", ":5433:", ":6432:"),
        regex=r"(?:^|[\s\"'`])(?:\*|[A-Za-z0-9.\-]*[A-Za-z][A-Za-z0-9.\-]*):(?:[0-9]{1,5}|\*):[A-Za-z0-9_.*\-]+:"
              r"[A-Za-z0-9_.*@\-]+:([^\s:\"'`\\]{4,128})(?:$|[\s\"'`\\,])",
        group=1, back=200, reach=300, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"db.internal:5432:*:app:We{_PW}!", f"localhost:*:*:postgres:{_PW}"),
        negative=("localhost:5432:*:app:*", "12:30:45:10:99", "db.internal:5432:app:app:$PGPASSWORD"),
    ),
    Rule(
        name="netrc_password", kind="secret:netrc", severity=WARN, keywords=("machine",),
        regex=r"\bmachine[ \t]+[^\s\"'`\\]+(?:[ \t]+(?:login|account)[ \t]+[^\s\"'`\\]+)*[ \t]+password[ \t]+"
              + _BARE,
        group=1, reach=400, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=("machine ftp.example.net login backup password Welcome1!", "machine api.x.io login me password hunter22"),
        negative=("machine api.x.io login me password $NETRC_PW",),
    ),
    Rule(
        name="curl_user", kind="secret:curl_user", severity=WARN, keywords=("curl",),
        regex=r"(?i)\bcurl\b[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t=]*" + r"""(?:\\{0,3}["'])?"""
              + r"""[^\s:"'`\\]{0,64}:([^\s"'`\\|;&<>]{3,128})""",
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"curl -u admin:Qw!{_PW}2345 https://x.io", f"curl --user 'deploy:{_PW}' https://x.io",
                  f'curl -u ":d2Lk{_PW}!t" https://x.io'),
        negative=("curl -u admin: https://x.io", "curl -u $USER:$PASS https://x.io", "curl -u USERNAME:PASSWORD x",
                  "curl --user neo4j:[PASSWORD] http://db:7474/", "curl -i -u 'test:test' x"),
    ),
    Rule(
        name="prose_secret_intl", kind="secret:prose", severity=WARN, keywords=tuple(dict.fromkeys(w.encode().lower().decode() for w in _PW_WORDS)),
        regex=r"(?i)(?:" + "|".join(_PW_WORDS) + r")[^\n]{0,48}?" + _COPULA + r"[ \t]*(?:" + QO + r")?"
              r"""([\x21\x23-\x26\x28-\x5b\x5d-\x5f\x61-\x7e]{4,128})""",
        group=1, back=8, reach=300, boundary="", check="prose_secret", source=GENERIC_SOURCE,
        positive=(f"Das Passwort für die Datenbank lautet {_PW}!", f"Le mot de passe est {_PW}",
                  f"数据库密码：{_PW}", f"Пароль: {_PW}"),
        negative=("Das Passwort ist erforderlich.", "mot de passe : oublié", "密码：请联系管理员"),
    ),
    Rule(
        name="seed_phrase", kind="secret:seed_phrase", severity=WARN,
        keywords=("mnemonic", "seed phrase", "seed_phrase", "seedphrase", "seed-phrase", "recovery phrase",
                  "recovery_phrase", "secret phrase", "secret_phrase", "wallet seed", "wallet_seed", "seed words"),
        regex=r"(?i)" + _SEED_NAME + r"[^\n]{0,24}?(?::|=|：|\bis\b)[ \t]*" + r"""(?:\\{0,3}["'`])?"""
              + r"((?:[a-z]{3,8}[ \t]){11,23}[a-z]{3,8})",
        group=1, back=8, reach=400, boundary="", check="seed_words", source=GENERIC_SOURCE,
        positive=('MNEMONIC="absent accident acid acoustic actress adapt addict adjust admit adult advice about"',),
        negative=("mnemonic: the words you write down when you create the wallet are the only backup",
                  "seed phrase: twelve words"),
    ),
)
