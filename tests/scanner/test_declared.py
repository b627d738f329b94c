"""A secret-named literal is masked however code declares it (``scanner.declared``):
behind a type, a string prefix, a wrapping constructor, a macro, R's arrow, a Lisp
``def``, a shell's ``set``, a setter's key — through the whole pipeline as Claude Code
writes a transcript; the code such declarations usually hold stays as it reads."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.secret_names import names_no_secret

from .helpers import is_json

PW = "Zq8vR2mW7pLx4nBq"


def _redacted(scanner, text: str) -> bytes:
    raw = json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text + "\n"}]}}).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out)
    return out


@pytest.mark.parametrize("template", [
    'const apiKey: string = "{}";', "  private readonly clientSecret: string = '{}';", 'let secret: &str = "{}";',
    'const API_TOKEN: &\'static str = "{}";', 'val authToken: String = "{}"', 'api_key: str = "{}"',
    'var apiKey string = "{}"', 'apiKey?: string | undefined = "{}"', 'password = r"{}"', 'SECRET_KEY = b"{}"',
    'var clientSecret = @"{}";', 'let secret = String::from("{}");', 'api_key: Some("{}".into()),',
    '#define API_KEY "{}"', '#define kClientSecret @"{}"', 'api_key <- "{}"', '(def api-key "{}")',
    "set -gx OPENAI_API_KEY {}", 'setx API_KEY "{}"', 'headers.put("X-Api-Key", "{}");',
    'os.setenv("API_TOKEN", "{}")', 'Environment.SetEnvironmentVariable("CLIENT_SECRET", "{}")',
])
def test_a_declared_secret_literal_is_masked_in_a_json_line(scanner, template):
    out = _redacted(scanner, template.format(PW))
    assert PW[2:10].encode() not in out, out


def test_the_declaration_keeps_its_name_and_type(scanner):
    out = _redacted(scanner, f'const apiKey: string = "{PW}";')
    assert b"const apiKey: string = " in out


@pytest.mark.parametrize("text", [
    "const apiKey: string = process.env.API_KEY!;", "password: string;", 'tokenKey: string = "auth_token"',
    'const API_KEY_HEADER: string = "X-Api-Key";', f'publicKey: string = "{PW}"',
    'WWW-Authenticate: Digest nonce="6bf5d6e4da1ce66918800195d6b9130d"',
    'token = f"{prefix}_{suffix}"', 'secret = $"{vault}-{region}"', 'password = r"^[a-z]{8,}$"',
    'https://x.io/pkg?tokena=A&amp;tokenb=B">package_name-0.1.2.tar.gz',
    'KeySourceActionValue: TypeAlias = "PauseAction | KeyDownAction | KeyUpAction"',
    '#define PASSWORD_PROMPT "Enter password: "', 'api_key <- Sys.getenv("API_KEY")',
    "set -x API_KEY $API_KEY", 'headers.put("X-Api-Key", apiKey);', f'cache.set("cache_key", "{PW}")',
    'headers.setdefault("sec-websocket-key", "testserver==")',
])
def test_code_that_only_looks_like_a_declaration_is_kept(scanner, text):
    assert redact_text(scanner, (text + "\n").encode()).text == (text + "\n").encode()


@pytest.mark.parametrize("name, no_secret", [
    (b"key_node.tag = ", True), (b"credentials.username = ", True), (b"token.type", True),
    (b"spring.datasource.password=", False), (b"token.value = ", False), (b"this.apiKey = ", False),
    (b"user.pin = ", False), (b'app.config["SECRET_KEY"] = ', False), (b"api.token = ", False),
    (b"jwt.key: ", False), (b"tokenizer.css:", True),
])
def test_a_dotted_name_is_judged_by_its_last_attribute(name, no_secret):
    assert names_no_secret(name) is no_secret


def test_another_attribute_of_a_secret_named_object_is_kept(scanner):
    text = b'key_node.tag = "tag:yaml.org,2002:str"\n'
    assert redact_text(scanner, text).text == text
