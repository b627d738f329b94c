"""The forms code, commands and credential files give a secret (``scanner.forms``),
through the whole pipeline: what is masked, and what is left as it reads."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.scanner import redact_text

from .helpers import is_json

PW = "Zq8mR2kW4xT7"


def _redacted(scanner, text: str, ensure_ascii: bool = True) -> bytes:
    raw = json.dumps({"type": "user", "message": {"content": "see:\n" + text + "\n(end)"}},
                     ensure_ascii=ensure_ascii).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out)
    return out


@pytest.mark.parametrize("text", [f"数据库密码：{PW}", f"Пароль: {PW}", f"La contraseña es {PW}", f"A senha é {PW}"])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_a_password_said_in_another_language_is_masked_however_the_json_spells_it(scanner, text, ensure_ascii):
    # A serialiser that escapes non-ASCII (Python's json.dumps) writes \u5bc6\u7801:
    # the escaped word triggers a decoded view of the line.
    assert PW.encode() not in _redacted(scanner, text, ensure_ascii)


@pytest.mark.parametrize("text", ['client.getToken("refresh")', 'ds.setPassword(System.getenv("DB_PASSWORD"))',
                                  "define('AUTH_KEY', 'put your unique phrase here');",
                                  "mnemonic: the words you write down when you create the wallet are the only backup",
                                  "echo $CR_PAT | docker login ghcr.io -u me --password-stdin"])
def test_what_only_looks_like_a_form_is_kept(scanner, text):
    assert json.dumps(text)[1:-1].encode() in _redacted(scanner, text)


@pytest.mark.parametrize("text, secret", [
    (f'new NetworkCredential("svc-backup", "Sp!{PW}")', f"Sp!{PW}"),
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'hunter22';", "hunter22"),
    ("echo 'Welcome1' | docker login -u me --password-stdin r.io", "Welcome1"),
    ("htpasswd -bc /etc/nginx/.htpasswd admin Summer24", "Summer24"),
    ("db.internal:5432:*:app:Welcome1", "Welcome1"),
    ("docker login -u deploy -p '^PMes=F&I%#77&' r.io", "^PMes=F&I%#77&"),
])
def test_a_password_its_place_names_is_masked_whatever_its_shape(scanner, text, secret):
    # Low-entropy human passwords: the value gate alone would let them through.
    out = _redacted(scanner, text)
    assert json.dumps(secret)[1:-1].encode() not in out


def test_a_seed_phrase_is_masked_only_at_a_wallet_length(scanner):
    words = "absent accident acid acoustic actress adapt addict adjust admit adult advice about".split()
    assert words[5].encode() not in _redacted(scanner, 'MNEMONIC="' + " ".join(words) + '"')
    assert words[5].encode() in _redacted(scanner, 'MNEMONIC="' + " ".join(words[:11]) + '"')
