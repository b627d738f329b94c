"""Every rule of the bundled table, driven by its own positive and negative examples."""

from __future__ import annotations

import re

import pytest

from abcd_daemon.scanner.generic import GENERIC_RULES
from abcd_daemon.scanner.bundled import BUNDLED_RULES
from abcd_daemon.scanner.rules import IDENTITY_KINDS, SEVERITY_RANK

from .helpers import own_rules

RULES = {r.name: r for r in BUNDLED_RULES + GENERIC_RULES}


@pytest.fixture(scope="module")
def scanner(scanner):
    """Our own rules only (the full scanner is tested elsewhere)."""
    return own_rules(scanner)


def _kinds(scanner, text: str) -> set[str]:
    return {f.rule for f in scanner.scan(text.encode("utf-8"))}


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_finds_each_positive_example(scanner, name):
    rule = RULES[name]
    assert rule.positive, f"{name} has no positive example"
    for text in rule.positive:
        assert name in _kinds(scanner, text), f"{name} missed its positive example {text!r}"


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_ignores_each_negative_example(scanner, name):
    rule = RULES[name]
    assert rule.negative, f"{name} has no negative example"
    for text in rule.negative:
        assert name not in _kinds(scanner, text), f"{name} matched its negative example {text!r}"


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_positive_is_found_inside_a_json_string_and_masked(scanner, name):
    """Embedded mid-line in a JSON string value, each positive is still found."""
    import json

    rule = RULES[name]
    for text in rule.positive:
        line = json.dumps({"type": "user", "message": {"content": "see:\n" + text + "\n(end)"}})
        assert name in _kinds(scanner, line), f"{name} missed {text!r} inside JSON"


def test_rule_table_is_well_formed():
    names = [r.name for r in BUNDLED_RULES]
    assert len(names) == len(set(names))
    for r in BUNDLED_RULES:
        assert r.severity in SEVERITY_RANK
        if not r.source:
            assert r.keywords and all(k == k.lower() for k in r.keywords), r.name
            re.compile(r.regex.encode())


def test_no_bundled_regex_can_match_a_newline():
    """The line-locality contract: a finding never spans lines (a newline put
    anywhere inside a positive example is never inside a match)."""
    for r in BUNDLED_RULES:
        if r.source:
            continue
        for text in r.positive:
            for i in range(1, len(text)):
                split = text[:i] + "\n" + text[i:]
                for m in re.finditer(r.regex.encode(), split.encode()):
                    assert b"\n" not in m.group(), (r.name, split)


def test_identity_and_network_kinds_have_placeholders():
    for r in BUNDLED_RULES:
        if r.kind.startswith("net:") or r.source:
            assert r.kind in IDENTITY_KINDS


def test_only_rules_whose_windows_fit_a_neighbourhood_are_searched_by_one():
    """``search="neighbourhood"`` is a promise the engine checks when it compiles the
    rule: a rule needing a word boundary, an anchor or a window wider than a
    neighbourhood is refused, not silently searched another way."""
    import dataclasses

    from abcd_daemon.scanner.compiled import Compiled as _Compiled

    by_name = {r.name: r for r in GENERIC_RULES}
    assert {n for n, r in by_name.items() if r.search == "neighbourhood"} == {
        "secret_assignment", "secret_flag", "secret_call", "credential_pair", "quoted_secret",
        "quoted_secret_compared", "bare_secret", "xml_secret_attribute", "typed_secret", "wrapped_secret",
        "arrow_secret", "keyed_secret", "named_pair"}
    assert _Compiled(by_name["secret_assignment"]).whole_line
    assert not _Compiled(by_name["prose_secret"]).whole_line
    for bad in (dict(boundary="word"), dict(back=4096), dict(reach=1 << 20), dict(keywords=())):
        with pytest.raises(ValueError, match="cannot be searched by neighbourhood"):
            _Compiled(dataclasses.replace(by_name["secret_flag"], **bad))
