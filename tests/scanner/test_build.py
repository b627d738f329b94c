"""build_scanner: repository additions may raise, never lower; unusable ones degrade."""

from __future__ import annotations

import pytest

from abcd_daemon.errors import DegradedScanner, RedactionResidual
from abcd_daemon.scanner import build_scanner, redact_text
from abcd_daemon.scanner import rules as rules_mod
from abcd_daemon.scanner.bundled import BUNDLED_RULES

GOOD = {"name": "acme_token", "severity": "hard_fail", "keywords": ["acme_"], "regex": r"acme_[a-f0-9]{16,}",
        "examples": {"positive": ["acme_0123456789abcdef"], "negative": ["acme_short"]}}


@pytest.mark.parametrize(
    "addition, reason",
    [
        ({**GOOD, "regex": "acme_(["}, "does not compile"),
        ({**GOOD, "severity": "critical"}, "severity"),
        ({**GOOD, "keywords": []}, "keywords"),
        ({**GOOD, "keywords": "acme_"}, "keywords"),
        ({**GOOD, "surprise": 1}, "unknown key"),
        ({**GOOD, "name": "has space"}, "name"),
        ({**GOOD, "examples": {"positive": ["no match here"]}}, "positive example"),
        ({**GOOD, "examples": {"negative": ["acme_0123456789abcdef"]}}, "negative example"),
        ({**GOOD, "examples": ["not", "a", "table"]}, "examples"),
        ({"name": "sk_key_generic", "severity": "info"}, "lower"),
        ({"name": "github_pat", "severity": "warn"}, "lower"),
        ({"name": "github_pat", "severity": "hard_fail", "regex": "ghp_.*"}, "regex"),
        ({"name": "net_ipv4", "severity": "hard_fail", "keywords": ["."]}, "keywords"),
        ("not a table", "not a table"),
    ],
)
def test_an_unusable_addition_degrades_the_scanner_and_redaction_refuses(identity, addition, reason):
    sc = build_scanner(identity, [addition])
    assert reason in sc.degraded
    with pytest.raises(DegradedScanner) as err:
        redact_text(sc, b"anything")
    assert reason in str(err.value)


def test_the_same_name_twice_degrades(identity):
    assert "twice" in build_scanner(identity, [GOOD, GOOD]).degraded


def test_a_valid_addition_detects_and_masks(identity):
    sc = build_scanner(identity, [GOOD])
    assert sc.degraded == ""
    out = redact_text(sc, b"key acme_0123456789abcdef0 end")
    assert out.text == b"key acm" + b"*" * 17 + b"f0 end"
    assert out.kinds == {"custom:acme_token": 1}


def test_a_named_secret_group_narrows_the_mask(identity):
    add = {"name": "kv", "severity": "warn", "keywords": ["acme_id"], "regex": r"acme_id\s*=\s*(?P<secret>\w{8,})"}
    sc = build_scanner(identity, [add])
    out = redact_text(sc, b"acme_id = abcdefgh12345678xyz")
    assert out.text == b"acme_id = abc**************yz"


def test_raising_a_bundled_severity_is_honoured(identity):
    sc = build_scanner(identity, [{"name": "sk_key_generic", "severity": "hard_fail"}])
    assert sc.degraded == ""
    assert {r.name: r.severity for r in sc.rules}["sk_key_generic"] == "hard_fail"


def test_raising_an_identity_rule_severity_is_honoured(identity):
    sc = build_scanner(identity, [{"name": "github_username", "severity": "hard_fail"}])
    assert sc.degraded == "" and {r.name: r.severity for r in sc.rules}["github_username"] == "hard_fail"


def test_a_bundled_rule_that_fails_to_compile_degrades(identity, monkeypatch):
    broken = rules_mod.Rule(name="broken", kind="token:broken", severity="hard_fail", keywords=("x",), regex="(")
    monkeypatch.setattr("abcd_daemon.scanner.build.BUNDLED_RULES", BUNDLED_RULES + (broken,))
    sc = build_scanner(identity)
    assert sc.degraded.startswith("bundled rule table unusable")
    with pytest.raises(DegradedScanner):
        redact_text(sc, b"x")


def test_build_scanner_never_raises_on_garbage(identity):
    for additions in ([None], [{"name": None}], [{"name": "x", "severity": "warn", "keywords": [1], "regex": 2}]):
        assert build_scanner(identity, additions).degraded


def test_degraded_refusal_is_retryable_not_permanent(identity):
    sc = build_scanner(identity, [{**GOOD, "regex": "("}])
    with pytest.raises(DegradedScanner) as err:
        redact_text(sc, b"x")
    assert not isinstance(err.value, RedactionResidual)


def test_a_catastrophic_backtracking_addition_runs_in_linear_time(identity):
    """`(a+)+$` wedged `re` for ever on one line of a's; RE2 scans it in one pass."""
    add = {"name": "evil", "severity": "warn", "keywords": ["aaaa"], "regex": "(a+)+$"}
    sc = build_scanner(identity, [add])
    assert not sc.degraded
    line = b"x " + b"a" * 200_000 + b"!\n"
    out = redact_text(sc, line)
    assert out.text == line  # no match (the run ends in '!'), and no hang


def test_an_addition_re2_cannot_run_is_refused_naming_the_syntax(identity):
    add = {"name": "look", "severity": "warn", "keywords": ["x"], "regex": "x(?=y)"}
    sc = build_scanner(identity, [add])
    assert "RE2 syntax" in sc.degraded and "look" in sc.degraded
