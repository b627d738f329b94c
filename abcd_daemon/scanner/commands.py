"""Generic detectors for a password handed to a command-line tool in its own syntax.

``generic.cli_password`` reads the ``-p``/``-P``/``-a`` flag of database clients and
registry logins, ``generic.secret_flag`` any ``--…password v`` flag. Other tools an
agent runs in a Bash command take a password in a syntax of their own — a flag
letter no name says is a password, a ``user%password`` or ``user/password@db``
pair, a positional argument — and neither rule can read it. Each rule here names
its tools; the masked span is the value (the first capture group that took part:
single-quoted, double-quoted or bare), starred whole, and is judged by
``checks.literal_password``: its place says it is a password, so a word is masked,
while placeholders, ``$VARIABLES``, ``%VARIABLES%``, numbers and prose pass.

Rules (all RE2, linear time; a command never runs past ``|``, ``;`` or ``&``):
- ``archive_password``: ``zip``/``unzip -P v``, ``7z``/``rar``/``unrar … -pv``;
- ``keygen_passphrase``: ``ssh-keygen … -N v`` / ``-P v``;
- ``ldap_password``: ``ldapsearch``/``ldapmodify``/… ``-w v``;
- ``windows_account_password``: ``net use … /user:U v``, ``net user U v``,
  ``xfreerdp … /p:v``;
- ``smb_password``: ``smbclient``/``rpcclient``/``smbmap`` … ``-U user%v``;
- ``oracle_password``: ``sqlplus``/``expdp``/``impdp``/``sqlldr``/``rman`` ``user/v@db``;
- ``openssl_passwd``: ``openssl passwd -6 'v'`` (a quoted password only);
- ``queue_user_password``: ``rabbitmqctl add_user|change_password U v``;
- ``chpasswd_line``: ``echo 'user:v' | chpasswd``.
"""

from __future__ import annotations

from .rules import GENERIC_SOURCE, WARN, Rule

#: A value: single-quoted, double-quoted (either JSON-escaped up to three times) or
#: a bare shell word — three groups, the first that took part is the value.
_V = (r"""(?:\\{0,3}'([^'\\\n]{4,128})\\{0,3}'|\\{0,3}"([^"\\\n]{4,128})\\{0,3}"|"""
      r"""([^\s"'`\\|;&<>/%$-][^\s"'`\\|;&<>]{3,127}))""")
#: The rest of a command before a flag: no pipe, list or newline.
_ARGS = r"[^\n|;&]{0,200}?"
_PW = "Zq8mR2kW4xT7"

COMMAND_RULES: tuple[Rule, ...] = (
    Rule(
        name="archive_password", kind="secret:cli_password", severity=WARN,
        keywords=("zip", "7z", "7za", "rar"),
        regex=r"(?i)\b(?:(?:un)?zip|7z[ar]?|(?:un)?rar)(?:\.exe)?\b" + _ARGS
              + r"[ \t](?-i:-P[ \t]+|-h?p)" + _V,
        group=1, back=8, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"zip -P {_PW} secret.zip file.txt", f"7z a -p{_PW} archive.7z files/",
                  f"unzip -P '{_PW}' secret.zip", f"rar a -p{_PW} out.rar dir", f"rar a -hp{_PW} v.rar files/"),
        negative=("zip -r out.zip dir", "7z a -p archive.7z files/", "unzip -P $ZIP_PASSWORD a.zip",
                  "zip -P '' a.zip f"),
    ),
    Rule(
        name="keygen_passphrase", kind="secret:cli_password", severity=WARN, keywords=("ssh-keygen",),
        regex=r"\bssh-keygen\b" + _ARGS + r"[ \t]-[NP][ \t]*" + _V,
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"ssh-keygen -t ed25519 -N '{_PW}' -f key", f'ssh-keygen -p -P "{_PW}" -N "new{_PW}" -f k'),
        negative=("ssh-keygen -t ed25519 -N '' -f key", 'ssh-keygen -N "$PASSPHRASE" -f key'),
    ),
    Rule(
        name="ldap_password", kind="secret:cli_password", severity=WARN, keywords=("ldap",),
        regex=r"\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop|url)\b" + _ARGS
              + r"[ \t]-w[ \t]+" + _V,
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'ldapsearch -x -D "cn=admin,dc=example,dc=com" -w {_PW} -b dc=example',),
        negative=('ldapsearch -x -D "cn=admin,dc=example,dc=com" -W -b dc=example',
                  "ldapsearch -x -w $LDAP_PW -b dc=x"),
    ),
    Rule(
        name="windows_account_password", kind="secret:cli_password", severity=WARN,
        keywords=("net use", "net user", "freerdp"),
        regex=r"(?i)\bnet(?:\.exe)?[ \t]+(?:use\b" + _ARGS + r"[ \t]/user:[^\s/]+|user[ \t]+[^\s/*]+)[ \t]+" + _V
              + r"|\b(?:x|w|sdl-)?freerdp[0-9]?\b" + _ARGS + r"[ \t]/p:" + _V,
        group=1, back=8, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"net use \\\\fileserver\\share /user:CORP\\admin {_PW}", f"net user bob {_PW} /add",
                  f"xfreerdp /v:host /u:admin /p:{_PW}"),
        negative=("net use \\\\fileserver\\share /user:CORP\\admin *", "net user bob /delete",
                  "net use Z: \\\\server\\share /persistent:yes", "net user bob /active:no"),
    ),
    Rule(
        name="smb_password", kind="secret:cli_password", severity=WARN,
        keywords=("smbclient", "rpcclient", "smbmap", "smbcacls", "smbget"),
        regex=r"(?i)\b(?:smbclient|rpcclient|smbmap|smbcacls|smbget)\b" + _ARGS
              + r"""[ \t](?:-U|--user(?:name)?)[ \t=]*\\{0,3}["']?[^\s%"']{1,64}%""" + r"""([^\s"'`\\|;&<>$%]{4,128})""",
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"smbclient //host/share -U admin%{_PW}", f"rpcclient -U 'CORP\\svc%{_PW}' 10.0.0.5"),
        negative=("smbclient //host/share -U admin", "smbclient //h/s -U admin%$SMB_PW"),
    ),
    Rule(
        name="oracle_password", kind="secret:cli_password", severity=WARN,
        keywords=("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl"),
        regex=r"(?i)\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b(?:[ \t]+-[a-z]+)*[ \t]+(?:target[ \t]+|userid=)?"
              r"""\\{0,3}["']?[a-z0-9_$#.]{1,64}/([^\s@/"'`\\|;&<>$]{4,128})(?:@|[\s"'\\]|$)""",
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"sqlplus scott/{_PW}@orcl", f"expdp system/{_PW} directory=dp dumpfile=x.dmp",
                  f"sqlplus -s 'app/{_PW}@db' @run.sql"),
        negative=("sqlplus / as sysdba", "sqlplus scott/$ORA_PW@orcl", "sqlplus @scripts/run.sql"),
    ),
    Rule(
        name="openssl_passwd", kind="secret:cli_password", severity=WARN, keywords=("openssl",),
        regex=r"\bopenssl[ \t]+passwd\b[^\n|;&)]{0,100}?[ \t]" + r"""(?:\\{0,3}'([^'\\\n]{4,128})\\{0,3}'|\\{0,3}"([^"\\\n]{4,128})\\{0,3}")""",
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"usermod --password $(openssl passwd -6 '{_PW}!') ops", f'openssl passwd -apr1 "{_PW}"'),
        negative=("openssl passwd -6 -stdin", 'openssl passwd -6 "$NEW_PW"'),
    ),
    Rule(
        name="queue_user_password", kind="secret:cli_password", severity=WARN, keywords=("rabbitmqctl",),
        regex=r"\brabbitmqctl\b" + _ARGS + r"[ \t](?:add_user|change_password)[ \t]+[^\s|;&]+[ \t]+" + _V,
        group=1, reach=420, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f"rabbitmqctl add_user admin {_PW}", f"sudo rabbitmqctl change_password guest '{_PW}'"),
        negative=("rabbitmqctl add_user admin $RABBIT_PW", "rabbitmqctl add_user admin"),
    ),
    Rule(
        name="chpasswd_line", kind="secret:cli_password", severity=WARN, keywords=("chpasswd",),
        regex=r"""\b(?:echo|printf)[ \t]+(?:-[ne]+[ \t]+)?\\{0,3}["']?[a-z_][a-z0-9_.\-]{0,31}:([^\s"'`\\|;&<>:$]{4,128})"""
              r"""\\{0,3}["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b""",
        group=1, back=200, reach=60, boundary="", check="literal_password", source=GENERIC_SOURCE,
        positive=(f'echo "admin:{_PW}" | chpasswd', f"echo 'deploy:{_PW}' | sudo chpasswd"),
        negative=('echo "admin:$NEW_PW" | chpasswd', "echo root:password | chpasswd"),
    ),
)
