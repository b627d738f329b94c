"""Tokens pasted with no name and no provider context (``shapes``, the shape rules),
and the escape and checksum facts the ruleset's patterns rely on."""

from __future__ import annotations

import itertools
import json
import pathlib

import pytest

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.spaced import spaced
from abcd_daemon.scanner.values import base62_checksum, bad_checksum

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-log"
#: Kinds a clean, real transcript legitimately holds (the author, paths, addresses).
_NOT_SECRET = ("home_", "identity", "real_", "github_user", "local_user", "email", "net:", "net_", "harness:")


def _tool_result(text: str) -> bytes:
    """A Claude Code tool-result line whose output is ``text`` (JSON-escaped)."""
    line = {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_01Xk29qLm7Tz4vBn8RcW1yHs5d", "type": "tool_result", "content": text}]},
        "toolUseResult": {"stdout": text}}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def _gh(prefix: str, body: str) -> str:
    return prefix + body + base62_checksum(body.encode()).decode()


def test_spaced_reads_escaped_whitespace_as_spaces_and_keeps_offsets():
    raw = b'"$ cat creds\\nrubygems_ab\\tx%20y%0Az \\\\n"'
    out = spaced(raw)
    assert len(out) == len(raw)
    assert out == b'"$ cat creds  rubygems_ab  x   y   z \\  "'


@pytest.mark.parametrize("token", [
    "rubygems_441f8eb24ff35f6d53728eb1cd8fd14a3a9ae47bb9e802fb",
    "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",
    "napi_i0lhapz08aw786yj4dnyrl14c35fb7wkvv3xiz0jd0ud6492jgjzhwoaxbg68x6w",
])
def test_a_ruleset_token_at_the_start_of_an_output_line_is_masked(scanner, token):
    """``\\b`` does not hold after a JSON-escaped newline; the ruleset still sees it."""
    raw = _tool_result(f"$ cat credentials.txt\n{token}\n[29 more lines]")
    out = redact_text(scanner, raw).text
    assert token[8:40].encode() not in out
    json.loads(out)


def test_a_ruleset_token_before_an_ampersand_in_a_url_is_masked(scanner):
    token = "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"
    raw = json.dumps({"url": f"https://hooks.acme.test/debug?q=-%20{token}&ref=cli"}).encode()
    assert token[10:40].encode() not in redact_text(scanner, raw).text


def test_a_checksummed_token_is_masked_and_a_wrong_checksum_is_left():
    good = _gh("ghp_", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8")
    bad = good[:-1] + ("A" if good[-1] != "A" else "B")
    assert not bad_checksum(good.encode()) and bad_checksum(bad.encode())
    assert not bad_checksum(b"ghp_short")  # not the format: not judged here


def test_a_github_token_with_a_wrong_checksum_survives_redaction(scanner):
    good = _gh("ghp_", "kVE0dS2seGu7KECJTiRDuBUghubSgw")
    bad = good[:-6] + "AAAAAA"
    for token, kept in ((good, False), (bad, True)):
        out = redact_text(scanner, _tool_result(f"fixture: {token}")).text
        assert (token.encode() in out) is kept


@pytest.mark.parametrize("token", [
    "LTAIfCsdybRXMAXPn4hHNyY2", "ATBB3wYjqjw1fcx2ATm55pRvfXxgKnf841eR", "AKIDbwoBRQ2FAcSRx4XCaw84CnCMmAJFM0gp",
    "EAAGHnv4AojT9XTaiMqtGB3Ti1QrfB95Ihk5rDecuz7wxN4KbNGeabDHtTky8FpJALJbsnW0GfR9BfJxaq",
    "IQoJb3JpZ2luX2VjD2ICGWSOhEpy633JlbatN2wVXjj9/0KVxipuMVsdENLd2rMH54ZzwK0zHn9lQTWkCv",
])
def test_a_bare_random_token_is_masked_in_every_layout(scanner, token):
    for text in (f"- {token}", f'client = Client("{token}")', f"{token}  (created today)"):
        out = redact_text(scanner, _tool_result(text)).text
        assert token[4:28].encode() not in out, text


@pytest.mark.parametrize("token", [
    "key-3a347f9fe5031c7f20822ba2c0b26eac", "NRAK-7SFYOUTT1S0Y5TZ5Q7LVZ50GMSM",
    "xaat-19addd61-976e-4a7e-8921-f32ce1ef19e7", "lin_oauth_5c0855cf59584084675aecd5bb682d767df89d6a3dfae3f19a02779ac4bfec2a",
])
def test_a_prefixed_hex_upper_or_uuid_token_is_masked(scanner, token):
    body = token.split("-", 1)[-1] if "-" in token[:6] else token[10:]
    out = redact_text(scanner, _tool_result(f"- {token}")).text
    assert body[:20].encode() not in out


@pytest.mark.parametrize("text", [
    '"signature":"EqQBCkYIBxgCKkB1d2vZx7Qk3mP9sT2uV8wY4zA6bCdEfGh"',
    "'Qwen/Qwen3-Next-80B-A3B-Instruct', 'HuggingFaceTB/SmolLM3-3B'",
    "setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-f6c65b29c82e498115b3dc436b3a85fc046536dc8aedf03c6c5055c9fd414a51",
    "commit 3a347f9fe5031c7f20822ba2c0b26eac1234abcd",
    "session-d8724d95-7c2f-47bb-9211-6523d81e88c2 resumed",
    "toolu_01Xk29qLm7Tz4vBn8RcW1yHs5d msg_01HxQ7vK2mPq9RtZ8wYbN3cD req_011CR7knZhazhiKrMGTpDz4r",
    "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\">",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIfGPvGHRPDUWq8Zb3kLmN0pQrStUvWxYz12 deploy@build",
])
def test_ids_digests_names_and_file_contents_are_left(scanner, text):
    raw = _tool_result(text)
    assert redact_text(scanner, raw).secrets == 0, text


def test_a_harness_id_skipped_before_its_check_is_one_the_check_refuses(scanner, monkeypatch):
    """``bare_token`` skips a candidate opening with a harness id's lead without reading
    its groups; its check refuses every such value anyway, so the findings are those of
    the rule run with no skip — for every lead, in any case, after every delimiter — the
    ids stay readable, and a random token beside them is still masked."""
    from abcd_daemon.scanner.values import HARNESS_ID_PREFIXES

    body = "01Xk29qLm7Tz4vBn8RcW1yHs5dQ"
    ids = [lead.decode() + body for lead in sorted(HARNESS_ID_PREFIXES)]
    ids += [i.upper() for i in ids[:3]] + ["Toolu_" + body]
    near = ["toolux_" + body, "tool_" + body]  # leads of no harness id: judged as before
    words = " ".join(f"{d}{i}" for d, i in zip(itertools.cycle(" \"'`([=:,>|"), ids + near))
    raw = _tool_result(words + " - LTAIfCsdybRXMAXPn4hHNyY2 (created today)")
    skipping = [(f.start, f.end, f.rule) for f in scanner.scan(raw)]
    out = redact_text(scanner, raw).text
    assert all(i.encode() in out for i in ids) and b"LTAIfCsdybRXMAXPn4hHNyY2" not in out
    bare = next(c for c in scanner._comp if c.rule.name == "bare_token")
    assert bare.refused_leads == HARNESS_ID_PREFIXES
    monkeypatch.setattr(bare, "refused_leads", None)
    assert [(f.start, f.end, f.rule) for f in scanner.scan(raw)] == skipping


def test_a_known_format_keeps_its_own_label_inside_a_longer_run(scanner):
    """The shape rules yield: ``gho_…_old`` is GitHub's token, not a bare one."""
    token = _gh("gho_", "u8jzPde0IgxLd6GncfBAepfJBd0Kh8")
    rules = {f.rule for f in scanner.scan(f'{{"t":"x\\n{token}_old"}}'.encode())}
    assert "github_oauth" in rules and "bare_token" not in rules


def test_real_transcripts_hold_no_secret_findings(scanner):
    """Every real fixture transcript (12 MB, many Claude Code versions) is clean of
    secrets; whatever a secret rule finds in them is a false positive."""
    found = {}
    paths = sorted(FIXTURES.rglob("*.jsonl"))
    assert len(paths) > 20
    for p in paths:
        for f in scanner.scan(p.read_bytes()):
            if not f.kind.startswith(_NOT_SECRET) and not f.rule.startswith(_NOT_SECRET):
                found.setdefault(f.rule, p.name)
    assert found == {}
