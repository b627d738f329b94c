"""The maintained provider ruleset: loaded as data, compiled linear-time, fail-closed."""

from __future__ import annotations

import json
import random
import string

import pytest

from abcd_daemon.errors import DegradedScanner
from abcd_daemon.scanner import build_scanner, redact_text
from abcd_daemon.scanner import provider
from abcd_daemon.scanner.linear import compile_linear
from abcd_daemon.scanner.provider import PROVIDER_SOURCE, load_ruleset, uncapture_names, unverbose


def _rand(rnd, alphabet, n):
    return "".join(rnd.choice(alphabet) for _ in range(n))


def test_several_hundred_provider_rules_come_from_the_installed_package():
    info = load_ruleset()
    assert info.name == "kingfisher" and info.version
    assert len(info.rules) >= 400
    assert all(r.source == PROVIDER_SOURCE and r.kind.startswith("provider:") for r in info.rules)
    assert len({r.name for r in info.rules}) == len(info.rules)


def test_every_provider_pattern_compiles_in_re2(scanner):
    for rule in load_ruleset().rules:
        compile_linear(rule.regex)


def test_the_scanner_label_names_the_ruleset_and_its_version(scanner):
    info = load_ruleset()
    assert scanner.label.startswith(f"kingfisher {info.version} + abcd ")


@pytest.mark.parametrize("token", [
    "glpat-" + "a1B2c3D4e5F6g7H8i9J0",
    "shpat_" + "0123456789abcdef0123456789abcdef",
    "dop_v1_" + "4f9c" * 16,
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
])
def test_provider_tokens_the_old_table_missed_are_masked_in_json(scanner, token):
    line = json.dumps({"type": "user", "message": {"content": f"export TOKEN_X={token}\nok"}}) + "\n"
    out = redact_text(scanner, line.encode()).text
    assert token[-12:].encode() not in out
    json.loads(out)


def test_a_missing_ruleset_package_degrades_the_scanner_and_refuses(identity, monkeypatch):
    def gone():
        raise provider.RulesetUnavailable("the provider ruleset package 'kingfisher-bin' is not installed")

    monkeypatch.setattr("abcd_daemon.scanner.build.load_ruleset", gone)
    sc = build_scanner(identity)
    assert "provider ruleset unusable" in sc.degraded and "kingfisher-bin" in sc.degraded
    with pytest.raises(DegradedScanner):
        redact_text(sc, b"hello\n")


def test_an_unreadable_ruleset_listing_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "kingfisher"
    fake.write_text("#!/bin/sh\necho 'not json'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(provider, "binary_path", lambda: fake)
    with pytest.raises(provider.RulesetUnavailable, match="not its rule list"):
        load_ruleset()


def test_a_ruleset_pattern_re2_cannot_compile_degrades_the_scanner(identity, monkeypatch):
    info = load_ruleset()
    bad = provider.RulesetInfo(info.name, info.version, info.rules + (
        provider._rule(provider._Entry(id="x.lookahead", pattern="abc(?=def)", confidence="high")),))
    monkeypatch.setattr("abcd_daemon.scanner.build.load_ruleset", lambda: bad)
    sc = build_scanner(identity)
    assert "x.lookahead does not compile" in sc.degraded


def test_free_spacing_patterns_are_rewritten_for_re2():
    assert unverbose("(?x) a b # comment\n [ ] c") == "ab[ ]c"


def test_a_group_that_only_names_the_secret_is_never_the_span_masked(scanner):
    # sonar-api-token's first group is (login|token): the token after it must go
    token = "5524bf449ca45fcace54698371466398321f3a82"
    out = redact_text(scanner, f"mvn sonar:sonar -Dsonar.login={token}\n".encode()).text
    assert token[6:-6].encode() not in out and b"-Dsonar.login=" in out


def test_fixed_word_groups_become_non_capturing_and_nothing_else_changes():
    assert uncapture_names(r"sonar[_.-]?(login|token)=([a-z0-9]{40})") == r"sonar[_.-]?(?:login|token)=([a-z0-9]{40})"
    assert uncapture_names(r"ZXlK(?:(?P<alg>aGJHY2lPaU)|(?P<x>NElqb2))[a-z]{4}") == r"ZXlK(?:(?:aGJHY2lPaU)|(?:NElqb2))[a-z]{4}"
    # a class or an escape holding a parenthesis is not a group; a real token group stays
    assert uncapture_names(r"[(]\((abc)\)(x[0-9]+)") == r"[(]\((?:abc)\)(x[0-9]+)"
    assert uncapture_names(r"((live|test)_[a-f0-9]{35})") == r"((?:live|test)_[a-f0-9]{35})"


def test_placeholders_and_documented_examples_are_not_provider_findings(scanner):
    for text in ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "glpat-xxxxxxxxxxxxxxxxxxxx"):
        assert not [f for f in scanner.scan(text.encode()) if f.rule.startswith(("betterleaks.", "veles."))]


def test_a_provider_rule_cannot_backtrack_on_hostile_input(scanner):
    """RE2 is linear: a pathological line is scanned (and masked) in one pass."""
    rnd = random.Random(3)
    line = ("aws_secret_access_key=" + "a" * 50000 + " " + _rand(rnd, string.ascii_letters, 40) + "\n").encode()
    redact_text(scanner, line)


def _counting_runs(monkeypatch) -> list:
    """Count the processes ``provider`` starts (the binary listing its rules)."""
    runs: list = []
    real = provider.subprocess.run

    def run(*args, **kwargs):
        runs.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(provider.subprocess, "run", run)
    return runs


def test_a_later_process_takes_the_converted_ruleset_from_the_cache_without_running_the_binary(
        monkeypatch, tmp_path):
    monkeypatch.setenv("ABCD_CACHE", str(tmp_path / "cache"))
    runs = _counting_runs(monkeypatch)
    provider._load.cache_clear()  # as a fresh process
    first = load_ruleset()
    assert len(runs) == 1 and len(list((tmp_path / "cache").glob("ruleset-*.json"))) == 1
    provider._load.cache_clear()
    again = load_ruleset()
    assert len(runs) == 1 and again == first  # the same rules, field for field


def test_a_foreign_or_broken_cache_file_or_a_changed_binary_is_converted_afresh(monkeypatch, tmp_path):
    monkeypatch.setenv("ABCD_CACHE", str(tmp_path / "cache"))
    runs = _counting_runs(monkeypatch)
    provider._load.cache_clear()
    first = load_ruleset()
    (cached,) = (tmp_path / "cache").glob("ruleset-*.json")
    cached.chmod(0o644)  # readable by others: not a file we trust
    provider._load.cache_clear()
    assert load_ruleset() == first and len(runs) == 2
    cached.write_bytes(b"[[\"x\"")  # rewritten owner-only, but not a ruleset
    cached.chmod(0o600)
    provider._load.cache_clear()
    assert load_ruleset() == first and len(runs) == 3
    # A reinstalled binary (another mtime) is another key: converted, not read back.
    real = provider.binary_path()
    copy = tmp_path / "bin" / "kingfisher"
    copy.parent.mkdir()
    copy.write_bytes(real.read_bytes())
    copy.chmod(0o755)
    monkeypatch.setattr(provider, "binary_path", lambda: copy)
    provider._load.cache_clear()
    assert load_ruleset().rules == first.rules and len(runs) == 4
    assert runs[-1][0] == str(copy)
    provider._load.cache_clear()
