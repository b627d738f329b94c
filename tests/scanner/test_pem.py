"""PEM private keys: one-line (JSON-escaped), multi-line, truncated, merely named."""

from __future__ import annotations

import json

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.pem import consume_block

from .helpers import PEM_BODY, is_json, line

BEGIN, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"


def _pem(closed: bool = True) -> str:
    return "\n".join([BEGIN, *PEM_BODY] + ([END] if closed else []))


def test_pem_key_pasted_into_a_json_string_with_newline_escapes_is_masked_whole(scanner):
    raw = line("here is the key:\n" + _pem() + "\nthanks")
    out = redact_text(scanner, raw)
    for chunk in PEM_BODY:
        assert chunk[:40].encode() not in out.text
    assert b"BEGIN RSA" not in out.text
    assert b"here is the key:" in out.text and b"thanks" in out.text
    assert is_json(out.text) and out.kinds == {"token:pem_private_key": 1}


def test_truncated_pem_in_a_json_string_is_masked_through_the_view(scanner):
    raw = line("cat id_rsa\n" + _pem(closed=False) + "\n")
    out = redact_text(scanner, raw).text
    for chunk in PEM_BODY:
        assert chunk[8:40].encode() not in out
    assert is_json(out)


def test_multi_line_pem_is_collapsed_to_one_placeholder_line(scanner):
    raw = ("before\n" + _pem() + "\nafter\n").encode()
    out = redact_text(scanner, raw)
    assert out.text.split(b"\n") == [
        b"before", b"*" * len(BEGIN), b"[redacted-pem-body: 4 lines]", b"after", b""]


def test_truncated_multi_line_pem_with_evidence_is_consumed(scanner):
    raw = ("before\n" + _pem(closed=False) + "\n\nprose after the key\n").encode()
    out = redact_text(scanner, raw).text
    assert out == b"before\n" + b"*" * len(BEGIN) + b"\n[redacted-pem-body: 3 lines]\n\nprose after the key\n"


def test_a_pem_header_merely_named_in_prose_consumes_nothing(scanner):
    raw = ("Look for " + BEGIN + " in the file.\nThen run the tool\nand carry on\n").encode()
    out = redact_text(scanner, raw).text
    assert out.endswith(b" in the file.\nThen run the tool\nand carry on\n")


def test_a_pasted_header_needs_evidence_before_consuming_an_open_block(scanner):
    # Words after a lone header are prose, not key material.
    raw = (BEGIN + "\nwe rotated it on Tuesday\n").encode()
    out = redact_text(scanner, raw).text
    assert out.endswith(b"\nwe rotated it on Tuesday\n")


def test_armour_headers_are_evidence_of_an_open_block():
    text = (BEGIN + "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\nabc\n").encode()
    hs = 0
    he = len(BEGIN)
    block = consume_block(text, hs, he, he)
    assert block is not None and block[2] == 4  # armour x2, blank, one short body line


def test_pem_block_in_a_json_array_of_lines_keeps_each_line_json(scanner):
    rows = [json.dumps(BEGIN)] + [json.dumps(b) for b in PEM_BODY] + [json.dumps(END)]
    raw = ("\n".join(rows) + "\n").encode()
    out = redact_text(scanner, raw).text
    lines = out.split(b"\n")[:-1]
    assert all(is_json(x) for x in lines), lines
    assert b"[redacted-pem-body: 4 lines]" in out


def test_four_dash_ssh2_key_is_found(scanner):
    raw = ("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n" + "\n".join(PEM_BODY)
           + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n").encode()
    out = redact_text(scanner, raw).text
    assert PEM_BODY[1][:30].encode() not in out


def test_public_keys_and_certificates_are_left_alone(scanner):
    raw = ("-----BEGIN PUBLIC KEY-----\n" + PEM_BODY[0] + "\n-----END PUBLIC KEY-----\n").encode()
    assert redact_text(scanner, raw).text == raw
