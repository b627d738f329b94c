"""A PEM key inside a JSON string is masked within that string, and the line stays JSON."""

from __future__ import annotations

import base64
import json
import random
import urllib.parse

import pytest

from abcd_daemon.scanner import redact_text

_RND = random.Random(5)
BODY = [base64.b64encode(bytes(_RND.randrange(256) for _ in range(48))).decode() for _ in range(6)]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END RSA PRIVATE KEY-----"


def _bash_result(text: str) -> dict:
    """A Bash tool result as Claude Code writes it: the output twice on one line."""
    return {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01Xk29qLm7Tz4vBn8RcW1yHs", "type": "tool_result", "content": text, "is_error": False}]},
        "uuid": "b4babe68-1aff-45d9-a1b9-b9d6d5aaaaa0", "timestamp": "2025-06-14T10:22:33.123Z",
        "toolUseResult": {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}}


def _webfetch(url: str) -> dict:
    return {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "toolu_01", "name": "WebFetch", "input": {"url": url, "prompt": "post it"}}]}}


CASES = {
    "bash_result_twice": _bash_result(PEM),
    "percent_encoded_url": _webfetch("https://paste.example.net/new?text=" + urllib.parse.quote(PEM, safe="")),
    "form_encoded_url": _webfetch("https://paste.example.net/new?text=" + urllib.parse.quote_plus(PEM)),
    "nested_json": {"type": "user", "message": {"content": json.dumps({"key": PEM, "next": "kept"})}},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_pem_key_in_a_json_string_is_masked_and_the_line_stays_json(scanner, name):
    line = json.dumps(CASES[name], separators=(",", ":")) + "\n"
    out = redact_text(scanner, line.encode()).text
    doc = json.loads(out)
    flat = out.decode()
    for chunk in BODY:
        for spelling in (chunk[8:24], urllib.parse.quote(chunk[8:24], safe=""), urllib.parse.quote_plus(chunk[8:24])):
            assert spelling not in flat, f"{name}: a body chunk survived"
    assert doc["type"] == CASES[name]["type"]


def test_fields_after_the_key_survive_the_mask(scanner):
    line = json.dumps(_bash_result(PEM), separators=(",", ":")) + "\n"
    doc = json.loads(redact_text(scanner, line.encode()).text)
    assert doc["toolUseResult"]["interrupted"] is False
    assert doc["message"]["content"][0]["is_error"] is False
    assert doc["uuid"] == "b4babe68-1aff-45d9-a1b9-b9d6d5aaaaa0"


def test_a_truncated_key_in_nested_json_ahead_of_a_number_is_masked_not_refused(scanner):
    # ``["…BEGIN…\nMIIE…", 2]``: the number after the string's closing quote and comma
    # is the next value, not the key's last chunk (reading it as one refused the line).
    head = '{"k":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcw'
    raw = json.dumps({"z": [head, 2], "content": head}).encode()
    out = redact_text(scanner, raw).text
    assert b"MIIEvQIBADANBgkq" not in out
    assert json.loads(out)["z"][1] == 2


def test_a_session_key_whose_value_is_cut_off_leaves_the_structure_after_it(scanner):
    raw = json.dumps({"z": ['{"sessionKey": ', 2], "t": '{"sessionKey": "3f2a9c1e-77b0-4d5e"}'}).encode()
    out = redact_text(scanner, raw).text
    assert json.loads(out)["z"] == ['{"sessionKey": ', 2] and b"3f2a9c1e-77b0-4d5e" not in out
