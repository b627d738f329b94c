"""A word is masked where its place says it is a password (``scanner.password_place``),
through the whole pipeline as Claude Code writes a transcript; what only looks like
such a place is kept as it reads."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.password_place import password_place

from .helpers import is_json


def _redacted(scanner, text: str) -> bytes:
    raw = json.dumps({"type": "user", "message": {"content": "see:\n" + text + "\n(end)"}}).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out)
    return out


@pytest.mark.parametrize("text", [
    'password = "goodspec"', "'password' => 'goodspec',", ":password => 'goodspec',", '"db_pass": "goodspec"',
    "DB_PASSWORD=goodspec", "export REACT_APP_AUTH_PASS=goodspec", 'const dbPassword = "goodspec";',
    '<add key="FromEmailPassword" value="goodspec"/>', "The default Password is 'goodspec'",
    'ensure the password is "goodspec" and press On', "login_somewhere --http-password goodspec",
    "Server=db;Uid=app;Pwd=goodspec;", "Server=db;User ID=app;Password=goodspec;Encrypt=True",
    "db:\n  password: goodspec\n  user: app", "spring.datasource.password: goodspec",
])
def test_a_word_whose_place_says_password_is_masked(scanner, text):
    assert b"goodspec" not in _redacted(scanner, text)


@pytest.mark.parametrize("text", [
    "password = goodspec_input", "PASSWORD_HASHER=bcrypt", "passwordField = 'hidden'", 'password: "string"',
    '{"password": "required"}', "the password is 'incorrect'", "bypass = 'everything'", 'password = "${DB_PASS}"',
    'this.addPassword = "#add-password";', 'IAMUserChangePassword = "arn:aws:iam::aws:policy/IAMUserChangePassword"',
    "LOGIN_FORGOT_PASSWORD=$REACT_APP_BASE_URL/classroom/#/forgot_password", 'password = "changeme"',
    '<add key="TokenAudience" value="myapp"/>', "mytool --password prompt --user me", "mytool --password-file pw.txt",
    "const o = {\n  password: userinput,\n}", "  password: hashedPassword",
])
def test_what_only_looks_like_such_a_place_is_kept(scanner, text):
    assert json.dumps(text)[1:-1].encode() in _redacted(scanner, text)


def test_the_name_must_end_with_the_password_word_and_the_place_be_quoted_or_an_env_line():
    assert password_place(b"DB_PASSWORD=", b"goodspec")
    assert password_place(b'dbPassword = "', b"goodspec")
    assert not password_place(b"db_password = ", b"goodspec")  # bare, in code: a variable
    assert not password_place(b"DB_PASSWORD = ", b"goodspec")  # blanks: a constant given a name
    assert not password_place(b'PASSWORD_RULE = "', b"goodspec")
    assert not password_place(b'password = "', b"short")
    assert password_place(b"Pwd=", b"goodspec", b";", b";") and not password_place(b"Pwd=", b"goodspec", b" ", b";")


def test_a_sentence_word_ending_in_password_does_not_take_the_next_setting(scanner):
    line = "host=db port=5432 user=app mypassword sslmode=require"
    other = "postgres://app@db/app?sslmode=require"
    out = _redacted(scanner, line + "\n" + other)
    assert b"sslmode=require" in out and b"postgres://app@db/app?sslmode=require" in out


def test_a_query_password_ends_at_the_next_parameter(scanner):
    out = _redacted(scanner, "jdbc:postgresql://db:5432/app?user=app&password=Zq8mR2kW4xT7&sslmode=require")
    assert b"Zq8mR2kW4xT7" not in out and b"&sslmode=require" in out


def test_a_dollar_inside_a_password_is_part_of_it(scanner):
    assert b"ecret9" not in _redacted(scanner, 'password = "super$ecret9"')
