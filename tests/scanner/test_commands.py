"""A password handed to a command-line tool in its own syntax is masked
(``scanner.commands``): archive and key tools, LDAP, Windows accounts, SMB, Oracle,
RabbitMQ, chpasswd — and one a variable or a prompt stands for is kept."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.scanner import redact_text

from .helpers import is_json

PW = "Zq8vR2mW7pLx"


@pytest.mark.parametrize("command", [
    "zip -P {} secret.zip file.txt", "7z a -p{} archive.7z files/", "unzip -P '{}' secret.zip",
    "rar a -p{} out.rar dir", "ssh-keygen -t ed25519 -N '{}' -f key",
    'ldapsearch -x -D "cn=admin,dc=example,dc=com" -w {} -b dc=example',
    "net use \\\\fileserver\\share /user:CORP\\admin {}", "net user bob {} /add", "xfreerdp /v:host /u:admin /p:{}",
    "smbclient //host/share -U admin%{}", "sqlplus scott/{}@orcl", "expdp system/{} directory=dp dumpfile=x.dmp",
    "rabbitmqctl add_user admin {}", 'echo "admin:{}" | chpasswd', "useradd -m -p {} bob",
])
def test_a_tools_password_is_masked_in_a_bash_command(scanner, command):
    raw = json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Bash", "input": {"command": command.format(PW)}}]}}).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out) and PW.encode() not in out, out


@pytest.mark.parametrize("command", [
    "7z a -p archive.7z files/", "zip -r out.zip dir", "unzip -P $ZIP_PASSWORD a.zip", "ssh-keygen -N '' -f key",
    "ldapsearch -x -W -b dc=example", "net use \\\\server\\share /user:CORP\\admin *", "net user bob /delete",
    "smbclient //h/s -U admin%$SMB_PW", "sqlplus / as sysdba", "sqlplus scott/$ORA_PW@orcl",
    "rabbitmqctl add_user admin $RABBIT_PW", 'echo "admin:$NEW_PW" | chpasswd', "msbuild app.sln /p:Configuration=Release",
])
def test_a_prompt_a_variable_or_another_flag_is_kept(scanner, command):
    text = (command + "\n").encode()
    assert redact_text(scanner, text).text == text
