"""The prefilter's literals are required: a rule is never skipped on a line it matches."""

from __future__ import annotations

import random

from abcd_daemon.scanner.engine import Scanner
from abcd_daemon.scanner.linear import compile_linear
from abcd_daemon.scanner.values import is_placeholder
from abcd_daemon.scanner.literals import required_literals
from abcd_daemon.scanner.provider import load_ruleset


def test_prefixed_and_keyword_rules_get_their_literals():
    assert required_literals(r"\b(glpat-[\w-]{20})") == {"glpat-"}
    assert required_literals(r"(?i)(?:adafruit)(?:[ \t\w.-]{0,20})=([a-z0-9]{32})") == {"adafruit"}
    assert required_literals(r"(?:hvs|hvb)\.[a-z]{24}") == {"hvs.", "hvb."}


def test_a_pattern_with_no_required_literal_gets_none():
    assert required_literals(r"[a-f0-9]{32}") is None
    assert required_literals(r"(?:abc)?[0-9]{8}") is None
    assert required_literals(r"(?:abcd|[0-9]{4})x") is None


def test_every_literal_is_in_every_match_of_every_provider_rule():
    """Soundness on the real ruleset: every match any provider rule makes on the
    labelled corpus (searched with no prefilter at all) holds one of its literals."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from recall_corpus import build, contexts_for, place
    finally:
        sys.path.pop(0)
    corpus = build(seed=5, per_family=2)
    text = "\n".join(place(e, c) for e in corpus.positives for c in contexts_for(e)).encode()
    low = text.lower()
    checked = 0
    for rule in load_ruleset().rules:
        lits = required_literals(rule.regex)
        if not lits:
            continue
        for m in compile_linear(rule.regex).finditer(text):
            checked += 1
            found = low[m.start() : m.end()]
            assert any(lit.encode() in found for lit in lits), (rule.name, sorted(lits))
    assert checked > 100


def test_the_prefiltered_scan_equals_running_every_provider_rule_on_every_line(scanner):
    rules = [r for r in scanner.rules if r.source == "provider"]
    rnd = random.Random(11)
    lines = []
    for r in rules[::7]:
        for lit in (r.keywords or ("",))[:1]:
            lines.append(("x " + lit + "".join(rnd.choice("abcdef0123456789ABCDEF") for _ in range(70)) + " y"))
    text = ("\n".join(lines) + "\n").encode()
    fast = {(f.start, f.end) for f in Scanner(rules, scanner._ctx).scan(text)}
    brute = set()
    for r in rules:
        rx = compile_linear(r.regex)
        for m in rx.finditer(text):
            g = next(((s, e) for s, e in (m.span(i) for i in range(1, rx.groups + 1)) if e > s >= 0), m.span())
            if not is_placeholder(text[g[0] : g[1]]):  # by contract never a finding (a bad checksum)
                brute.add(g)
    assert brute - fast == set() or all(any(a <= s and e <= b for a, b in fast) for s, e in brute - fast)
