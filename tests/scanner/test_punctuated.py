"""A password made of punctuation is masked wherever a name says what it is
(``scanner.punctuated``), through the whole pipeline as Claude Code writes a
transcript; the code such punctuation usually is stays as it reads."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.punctuated import reads_as_password
from abcd_daemon.scanner.values import balanced, is_placeholder

from .helpers import is_json

PW = "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}"
JWT_SECRET = "7`D'}/vYR)T;W\\5]EBrf;_&k>qX??]G&3CF=;@vyrVBp[$_hK4^?{qT/EglJe[FYjp:IPgl_t$%r"


def _redacted(scanner, text: str) -> bytes:
    raw = json.dumps({"type": "user", "message": {"content": "see:\n" + text + "\n(end)"}}).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out)
    return out


def _survives(out: bytes, secret: str) -> bool:
    """Any 8-byte run of the secret (as JSON spells it) is still in ``out``."""
    s = json.dumps(secret)[1:-1].encode()
    return any(s[i:i + 8] in out for i in range(len(s) - 7))


@pytest.mark.parametrize("template", [
    'password = "{}"', "api_key: '{}'", "secret := `{}`", "apikey = {}", "db_pass: {},", 'my_password_secure = @"{}";',
    'char secrete[25] = "{}";', 'if (api_key === "{}") {{', 'if ("{}" !== my_private_key) {{',
    '<sometag name="the_password" value="{}" />', "<sometag value='{}' name='the_password_att'/>",
    '<the_password_tag value="{}">x</the_password_tag>', '<sometag name="the_password">{}</sometag>',
    "< the_password > {} </the_password>", 'std::string secret("{}");',
])
def test_a_punctuated_password_after_its_name_is_masked_in_a_json_line(scanner, template):
    out = _redacted(scanner, template.format(PW))
    assert not _survives(out, PW), out


def test_a_jwt_secret_of_quotes_and_backslashes_is_masked(scanner):
    out = _redacted(scanner, f'  jwtsecret: "{JWT_SECRET}"')
    assert not _survives(out, JWT_SECRET)
    assert b"jwtsecret" in out  # the name stays: the transcript keeps its meaning


def test_the_value_is_masked_in_plain_text_too(scanner):
    out = redact_text(scanner, "password = '`123QWERasdf'\ndb_pass: 'A,.:-\u00a8@*\u00bf?!'\n".encode()).text
    assert b"123QWERasdf" not in out and "\u00bf?!".encode() not in out
    assert out.count(b"\n") == 2


@pytest.mark.parametrize("text", [
    "password = hash(pw)", "token=tokens[i];", "api_key=process.env.KEY||'x'", "secret={SECRET}",
    "TOKEN=$(cat ~/.token)", "hash_to_key = {_hash(key): key for key in keys}",
    "token.children = [cls.from_dict(c) for c in token]", "HKEYS = (winreg.HKEY_USERS,",
    "def redo(token: _core.TrioToken) -> None:", "pass :data:`h11.CLIENT`. If",
    "keyMap:t.#f,keyList:t.#a,valList:t.#i,next:t.#d", "let tokenStartI=0;for(let i=0;i<n;i++){",
    "putenv('AUTH_DOMAIN=google.com');",
    'token_pattern = "(?u)\\b\\w\\w+\\b"', 'password = "${DB_PASSWORD}"', "pwd=#{datastore['DBPASSWORD']}",
    'secret = "open sesame"', 'api_key: "{\\"a\\": 1}"', "const pw = await readUserInfo.password('New password: ')",
    "my_macro!(\\'r#foo);", "<token>{ some text here }</token>", 'raise TokenError("EOF in multi-line string", start)',
])
def test_code_and_references_after_a_secret_name_are_kept(scanner, text):
    raw = (text + "\n").encode()
    assert redact_text(scanner, raw).text == raw


def test_a_value_without_punctuation_is_left_to_the_plain_rule():
    # (the plain assignment rule and its gate judge these; these rules never widen them)
    assert not reads_as_password(b"hunter2Xk29", quoted=True)
    assert not reads_as_password(b"Xk29qLm7Tz4vBn8RcW1yHs5d,", quoted=False)


def test_a_template_is_a_reference_only_when_its_body_is_well_formed():
    assert balanced(b"secrets.X[0]") and not balanced(b"e]nob(ody[finds")
    for ref in (b"${DB_PASSWORD}", b"${{ secrets.NPM_TOKEN }}", b"{{ vault['k'] }}", b"#{env['PW']}", b"${a[0]}"):
        assert is_placeholder(ref), ref
    assert not is_placeholder(PW.encode())
