"""Fuzzing the two-stage redaction (abcd_daemon/scanner redact_text) with an explicit
identity (the rule table's EXAMPLE_IDENTITY — never the machine's own HOME or git).

Input: text assembled from every bundled rule's positive AND negative examples, the
identity's values, escape fragments (``\\n``, ``\\/``, ``%2F``, ``\\u00xx``), arbitrary
Unicode, separators and nothing at all between pieces (glued pieces cascade), laid out
as raw lines, as Claude-Code-shaped JSON lines, as JSON documents of arbitrary structure
(``ensure_ascii`` either way) and, on non-JSON lines, bytes that are not UTF-8.
(tests/scanner draws from a fixed list of ~25 pieces and checks one property each; these
draw from the whole rule table and check them together.)

What is asserted, exactly:
1. ``redact_text`` returns, or raises RedactionResidual or ScanDeadline — nothing else
   (a 30 s deadline turns a pathological input into ScanDeadline, not a hang).
2. No stage-one finding → the output is the input, byte for byte, counters zero.
3. The output is a fixed point: scanning it finds nothing outside abcd's own
   ``[redacted-…]`` placeholders, so redacting it again changes nothing.
4. Length class. Secret tokens are masked in place: when no identity/network kind
   (those get placeholders) and no PEM block (its body lines are collapsed to one
   line) was redacted, the output has the input's length and every byte that differs
   is ``*``. Otherwise, without PEM, the line count is kept and every changed line
   carries a ``*`` or a placeholder.
5. JSON: without PEM, every line that was a JSON document is one after, line for line;
   with PEM, an input whose every line is JSON gives an output whose every line is.
6. Counters: ``secrets + home_paths`` is the number of findings and ``home_paths`` the
   home kinds' share.
"""

from __future__ import annotations

import json
import re
import time

import msgspec
import pytest
from hypothesis import strategies as st

from abcd_daemon.errors import RedactionResidual, ScanDeadline
from abcd_daemon.scanner import Identity, build_scanner, redact_text
from abcd_daemon.scanner.bundled import BUNDLED_RULES, EXAMPLE_IDENTITY
from abcd_daemon.scanner.generic import GENERIC_RULES
from abcd_daemon.scanner.rules import HOME_KINDS, IDENTITY_KINDS, PEM_KIND, PLACEHOLDERS

from .fuzzing import bomb_depths, fuzz

IDENTITY = Identity(**EXAMPLE_IDENTITY)
SCANNER = build_scanner(IDENTITY)
assert not SCANNER.degraded, SCANNER.degraded

#: Examples of the rules whose findings are masked in place (tokens, key/values) and of
#: those that get a placeholder or consume lines (identity, network, PEM).
_token_examples = sorted({e for r in BUNDLED_RULES if r.kind not in IDENTITY_KINDS | {PEM_KIND}
                          for e in (*r.positive, *r.negative)})
_other_examples = sorted({e for r in BUNDLED_RULES if r.kind in IDENTITY_KINDS | {PEM_KIND}
                          for e in (*r.positive, *r.negative)})
_identity = [*IDENTITY.names, *IDENTITY.emails, IDENTITY.remote_user, IDENTITY.home,
             f"{IDENTITY.home}/src/app", f"-Users-{IDENTITY.user}-work", "/home/zed/y"]
_fragments = [" ", "\n", "\t", '"', "\\", "=", ":", "/", ",", "@", ".", "-", "_", "\\n",
              "\\/", "%2F", "%252F", "\\u0067hp_", "\\u00e9", "file://", "https://", "é", "€",
              "[redacted-email]", "~", "*" * 20, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIB"]
_pem = ["-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"]
_unicode = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
#: Token-only text (so the in-place masking is exercised on its own), and everything.
token_pieces = st.one_of(st.sampled_from(_token_examples), st.sampled_from(_fragments), _unicode)
all_pieces = st.one_of(st.sampled_from(_token_examples), st.sampled_from(_other_examples),
                       st.sampled_from(_identity), st.sampled_from(_fragments + _pem), _unicode)


def _dumps(value, ascii_only):
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def lines(draw, pieces, places) -> bytes:
    phrases = st.lists(pieces, max_size=10).map("".join)
    kind = draw(st.integers(0, 3))
    ascii_only = draw(st.booleans())
    if kind == 0:
        line = draw(phrases).replace("\n", " ").encode()
        if draw(st.integers(0, 4)) == 0:  # not UTF-8 (never JSON, so no JSON contract)
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x00\xfe"])) + line[at:]
        return line
    if kind == 1:
        return _dumps({"type": "user", "message": {"role": "user", "content": draw(phrases)},
                       "uuid": "u-1", "cwd": draw(st.sampled_from(places))},
                      ascii_only).encode()
    if kind == 2:
        return _dumps({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash",
             "input": {"command": draw(phrases)}},
            {"type": "tool_result", "content": [{"type": "text", "text": draw(phrases)}]}]}},
            ascii_only).encode()
    docs = st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), phrases),
        lambda inner: st.one_of(st.lists(inner, max_size=3),
                                st.dictionaries(phrases, inner, max_size=3)),
        max_leaves=6)
    return _dumps(draw(docs), ascii_only).encode()


texts = st.one_of(
    st.lists(lines(token_pieces, ["/repo", "/srv/app"]), min_size=1, max_size=8),
    st.lists(lines(all_pieces, ["/repo", *_identity]), min_size=1, max_size=8),
).map(b"\n".join)

_PLACEHOLDER = re.compile(rb"\[redacted-[a-z]+(?:-[a-z]+)*(?:: \d+ lines)?\]")
_MARKS = [p for p in set(PLACEHOLDERS.values()) if p != b"~"]


def _is_json(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return True


def _inside_placeholder(out: bytes, start: int, end: int) -> bool:
    return any(m.start() <= start and end <= m.end() for m in _PLACEHOLDER.finditer(out))


@fuzz(texts, examples=250)
def test_redaction_of_arbitrary_text_keeps_its_promises(text):
    try:
        r = redact_text(SCANNER, text, deadline=time.monotonic() + 30)
    except (RedactionResidual, ScanDeadline):
        return  # refused whole: nothing half-redacted is returned
    out = r.text
    kinds = set(r.kinds)
    # 6. counters
    assert r.secrets + r.home_paths == sum(r.kinds.values())
    assert r.home_paths == sum(n for k, n in r.kinds.items() if k in HOME_KINDS)
    # 2. nothing found, nothing changed
    if not SCANNER.scan(text):
        assert out == text and not r.kinds
    # 3. a fixed point
    leftover = [f for f in SCANNER.scan(out) if not _inside_placeholder(out, f.start, f.end)]
    assert leftover == [], [(f.kind, f.start, f.end) for f in leftover]
    # 4. length class
    in_lines, out_lines = text.split(b"\n"), out.split(b"\n")
    if not kinds & (IDENTITY_KINDS | {PEM_KIND}):
        assert len(out) == len(text)
        assert all(a == b or b == 0x2A for a, b in zip(text, out))
    if PEM_KIND not in kinds:
        assert len(out_lines) == len(in_lines)
        for a, b in zip(in_lines, out_lines):
            assert a == b or b"*" in b or b"~" in b or any(p in b for p in _MARKS), (a, b)
        # 5. JSON, line for line
        for a, b in zip(in_lines, out_lines):
            if _is_json(a):
                assert _is_json(b), (a, b)
    elif all(_is_json(a) for a in in_lines):
        assert all(_is_json(b) for b in out_lines)


_positives = sorted({e for r in BUNDLED_RULES if r.kind not in IDENTITY_KINDS | {PEM_KIND}
                     for e in r.positive if "\n" not in e})


@fuzz(st.tuples(bomb_depths, st.sampled_from(_positives), st.sampled_from("[{")),
      examples=40)
def test_a_secret_inside_a_json_line_nested_past_the_decoders_depth_is_masked_or_refused(case):
    depth, secret, opener = case
    inner = json.dumps(f"x {secret} y")
    line = ("[" * depth + inner + "]" * depth if opener == "[" else
            '{"a":' * depth + inner + "}" * depth).encode()
    try:
        out = redact_text(SCANNER, line, deadline=time.monotonic() + 30).text
    except (RedactionResidual, ScanDeadline):
        return
    assert [f for f in SCANNER.scan(out) if not _inside_placeholder(out, f.start, f.end)] == []


_cut_examples = sorted({e for r in BUNDLED_RULES + GENERIC_RULES for e in r.positive})


@pytest.mark.parametrize("example", _cut_examples)
def test_an_example_cut_anywhere_inside_json_structure_is_redacted_not_refused(example):
    # A transcript cuts text anywhere (``head -c``, a truncated tool result): every
    # rule's example, cut at a dozen points, as a tool input, as JSON inside a tool
    # result and ahead of a number in an array, must redact to valid JSON — a finding
    # whose own bytes are a JSON number is the one refusal left (``mask.fallback_line``).
    for cut in sorted({max(1, len(example) * k // 12) for k in range(1, 13)}):
        head = example[:cut]
        for obj in ({"message": {"content": [{"type": "tool_use", "input": {"command": head, "description": "x"}}]}},
                    {"message": {"content": [{"type": "tool_result", "content": json.dumps({"k": head, "n": 1})}]}},
                    {"message": {"content": [{"type": "text", "text": "'" + head + "'"}]}, "z": [head, 2]}):
            raw = json.dumps(obj).encode()
            if "sessionKey" in head and "\\" in head:
                continue  # (a cut inside a nested sessionKey's value: its view reads the array's number)
            out = redact_text(SCANNER, raw).text
            assert len(json.loads(out)) == len(obj)  # (a key a span crossed may be starred)
