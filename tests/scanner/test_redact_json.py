"""Redaction through JSON: escapes, nesting, views, and every JSON line staying JSON."""

from __future__ import annotations

import json
import urllib.parse

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abcd_daemon.scanner import redact_text

from .helpers import ANT, AWS, GHP, is_json, line


def test_secret_inside_a_json_string_is_sealed_and_the_line_stays_json(scanner):
    raw = line(f"my token is {GHP} ok")
    out = redact_text(scanner, raw)
    assert GHP.encode() not in out.text
    assert b"ghp" + b"*" * (len(GHP) - 5) + GHP[-2:].encode() in out.text
    assert is_json(out.text)
    assert out.secrets == 1 and out.kinds == {"token:github_pat": 1}


def test_token_after_a_json_newline_escape_is_masked_not_dropped(scanner):
    raw = json.dumps({"text": "words before\n" + GHP + "\nwords after"}).encode()
    assert b"\\n" + GHP.encode() in raw
    out = redact_text(scanner, raw).text
    assert b"\\nghp***" in out  # the \n escape kept, the token fingerprinted
    assert b"words before" in out and b"words after" in out
    assert is_json(out)


def test_secret_in_double_escaped_json_is_found(scanner):
    inner = json.dumps({"env": {"ANTHROPIC_API_KEY": ANT}})
    raw = json.dumps({"type": "tool_result", "content": json.dumps({"stdout": inner})}).encode()
    assert b'\\\\\\"' in raw  # really three levels of quoting
    out = redact_text(scanner, raw).text
    assert ANT[8:].encode() not in out
    assert is_json(out)
    assert json.loads(json.loads(json.loads(out)["content"])["stdout"])["env"]["ANTHROPIC_API_KEY"].startswith("sk-")


def test_token_spelled_with_unicode_escapes_is_found_through_the_view(scanner):
    escaped = "\\u0067\\u0068p_" + GHP[4:]  # "ghp_" with its first letters escaped
    raw = b'{"text":"key ' + escaped.encode() + b' here"}'
    assert json.loads(raw)["text"] == f"key {GHP} here"
    out = redact_text(scanner, raw).text
    assert GHP[6:-3].encode() not in out
    assert is_json(out) and json.loads(out)["text"].startswith("key *")


def test_percent_encoded_secret_in_a_url_is_masked(scanner):
    url = "https://cb.dev.io/auth?next=" + urllib.parse.quote(f"token={AWS}&mail=jane.doe@acme-corp.io", safe="")
    raw = line(f"opening {url}")
    out = redact_text(scanner, raw)
    assert AWS[4:].encode() not in out.text
    assert b"acme-corp" not in out.text
    assert {"token:aws_access_key", "email_address"} <= set(out.kinds)
    assert is_json(out.text)


def test_a_percent_escape_spelling_a_backslash_composes_with_json(scanner):
    # %5C is '\': percent-decoding then JSON-decoding spells "ghp_"
    raw = b'{"u":"https://x.dev/?q=%5Cu0067hp_' + GHP[4:].encode() + b'"}'
    out = redact_text(scanner, raw).text
    assert GHP[6:-3].encode() not in out
    assert is_json(out)


def test_escaped_solidus_session_url_is_masked(scanner):
    raw = b'{"u":"https:\\/\\/claude.ai\\/code\\/session_01HxQ7vK2mPq9RtZ8wYbN3cD"}'
    out = redact_text(scanner, raw).text
    assert b"HxQ7vK2mPq9RtZ8wYbN3" not in out
    assert is_json(out)


def test_masking_never_leaves_a_dangling_backslash(scanner):
    # the e-mail ends right before an escaped quote: the mask must not eat it
    raw = json.dumps({"t": 'say "mail jane.doe@acme-corp.io"'}).encode()
    out = redact_text(scanner, raw).text
    assert is_json(out)
    assert json.loads(out)["t"] == 'say "mail [redacted-email]"'


def test_surrogate_pair_beside_a_finding_survives_whole(scanner):
    raw = b'{"t":"\\ud83d\\ude00jane.doe@acme-corp.io\\ud83d\\ude00"}'
    out = redact_text(scanner, raw).text
    assert is_json(out)
    assert json.loads(out)["t"] == "\U0001f600[redacted-email]\U0001f600"


def test_lineage_prefix_lines_are_redacted_with_the_body(scanner):
    prefix = b"agent-1\n\n" + b"jsmith-macbook\n" + b"\n" * 4 + b"abcd-history-lineage-frame-end\n"
    raw = prefix + line(f"token {GHP}") + b"\n"
    out = redact_text(scanner, raw).text
    lines = out.split(b"\n")
    assert lines[2] == b"[redacted-hostname]"
    assert lines[7] == b"abcd-history-lineage-frame-end"
    assert is_json(lines[8])


def test_invalid_utf8_and_nul_bytes_do_not_crash(scanner):
    raw = b"\xff\xfe\x00garbage \x80\x81 " + GHP.encode() + b" \x00\xc3(\n" + line("ok") + b"\n\x00\x00"
    out = redact_text(scanner, raw)
    assert GHP[4:-3].encode() not in out.text
    assert out.text.startswith(b"\xff\xfe\x00garbage \x80\x81 ghp")


def test_a_ten_megabyte_single_line_does_not_crash(scanner):
    filler = ("lorem ipsum dolor 1.2 sit amet 10:22:33 " * 260_000)[: 10 * 1024 * 1024]
    raw = json.dumps({"t": filler + " " + GHP + " " + filler[:1000]}).encode()
    out = redact_text(scanner, raw)
    assert GHP[4:-3].encode() not in out.text
    assert is_json(out.text)


def test_a_line_the_exact_mask_would_break_is_masked_by_whole_string(identity):
    from abcd_daemon.scanner import build_scanner

    # An addition whose match straddles a closing quote: starring it exactly
    # would eat the quote, so the whole string values it touches are starred.
    sc = build_scanner(identity, [{"name": "straddle", "severity": "warn", "keywords": ["zq-"],
                                   "regex": r'zq-[a-z]+", "k2": "[a-z]+'}])
    assert sc.degraded == ""
    raw = b'{"k": "zq-abc", "k2": "defgh", "k3": "keep"}'
    out = redact_text(sc, raw).text
    assert is_json(out)
    # every string the span touches is starred whole (the key "k2" included); the
    # quotes, the colon and the untouched value stay
    assert json.loads(out) == {"k": "******", "**": "*****", "k3": "keep"}


def test_a_span_over_a_json_number_refuses_rather_than_breaking_the_line(identity):
    from abcd_daemon.errors import RedactionResidual
    from abcd_daemon.scanner import build_scanner

    sc = build_scanner(identity, [{"name": "digits", "severity": "warn", "keywords": ["port"],
                                   "regex": r'port": \d+'}])
    raw = b'{"port": 8080}'
    try:
        redact_text(sc, raw)
    except RedactionResidual as exc:
        assert exc.kinds == ["json_integrity"]
        assert b"8080" not in str(exc).encode()
    else:  # pragma: no cover - the test fails if no refusal
        raise AssertionError("expected a refusal")


def test_a_client_command_ending_a_json_string_is_kept_not_refused(scanner):
    # ``-p`` then the string's closing quote: the text after it is JSON structure,
    # which no mask can change — once read as the password, it refused the transcript.
    raw = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": "mysql -u root -p"}]},
                      "toolUseResult": {"stdout": "mysql -u root -p", "stderr": ""}}).encode()
    out = redact_text(scanner, raw)
    assert out.text == raw and out.secrets == 0
    pw = redact_text(scanner, line("mysql -u root -pZq8mR2kW4xT7 app"))
    assert b"Zq8mR2kW4xT7" not in pw.text and is_json(pw.text)


def test_non_json_lines_are_redacted_without_a_json_check(scanner):
    raw = b"plain text " + GHP.encode() + b" {not json\n"
    out = redact_text(scanner, raw).text
    assert out.startswith(b"plain text ghp*") and out.endswith(b" {not json\n")


_SECRETS = [GHP, ANT, AWS, "jane.doe@acme-corp.io", "10.20.30.40", "/Users/ada/src", "Ada Lovelace",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END RSA PRIVATE KEY-----"]
_json_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


@st.composite
def planted_objects(draw):
    secret = draw(st.sampled_from(_SECRETS))
    before, after = draw(_json_text), draw(_json_text)
    # a secret starts a word (rules carry a leading boundary, reference §3.2)
    value = before + draw(st.sampled_from([" ", "\n", '"', "\\", "\t", "="])) + secret + draw(
        st.sampled_from([" ", "\n", '"', "\\", "_x"])) + after
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), _json_text)
    other = draw(st.dictionaries(_json_text, leaves, max_size=3))
    key = draw(st.sampled_from(["content", "text", "stdout", "command"]))
    obj = {**other, key: draw(st.sampled_from([value, [value], {"nested": value}, json.dumps({"in": value})]))}
    return obj, secret, draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted_objects())
def test_every_json_line_stays_json_with_planted_secrets(scanner, case):
    obj, secret, ascii_only = case
    raw = json.dumps(obj, ensure_ascii=ascii_only).encode()
    out = redact_text(scanner, raw + b"\n" + raw).text
    for part in out.split(b"\n"):
        assert is_json(part), part
    core = secret.split("\n")[1] if "\n" in secret else secret
    mid = (core if core == "Ada Lovelace" else core[4:-3]).encode()
    # the planted copy on each line is gone (generated text may hold another one)
    assert out.count(mid) <= 2 * (raw.count(mid) - 1)
