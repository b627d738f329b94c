"""The Vectorscan gate only saves work: gated and ungated scans find the same spans."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from abcd_daemon.scanner.engine import Scanner
from abcd_daemon.scanner.gate import Gate

ROOT = Path(__file__).resolve().parents[2]


def _spans(scanner, data: bytes):
    return [(f.start, f.end, f.rule) for f in scanner.scan(data)]


def test_the_gate_hides_no_finding_on_real_transcripts(scanner, fixtures_dir):
    ungated = Scanner(scanner.rules, scanner._ctx, gated=False)
    files = sorted(fixtures_dir.rglob("*.jsonl"))[:40]
    data = b"".join(p.read_bytes() for p in files)
    assert _spans(scanner, data) == _spans(ungated, data)


def test_the_gate_hides_no_finding_on_the_labelled_corpus(scanner):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from recall_corpus import CONTEXTS, build, contexts_for, place
    finally:
        sys.path.pop(0)
    corpus = build(seed=3, per_family=1)
    lines = [place(e, ctx) for e in corpus.positives + corpus.negatives for ctx in contexts_for(e)]
    data = ("\n".join(lines) + "\n").encode()
    ungated = Scanner(scanner.rules, scanner._ctx, gated=False)
    assert _spans(scanner, data) == _spans(ungated, data)
    assert len(CONTEXTS) == 6


def test_the_compiled_gate_is_cached_owner_only_and_reused(tmp_path):
    cache = tmp_path / "cache"
    patterns = [r"glpat-[A-Za-z0-9_-]{20}", r"(?i)zzz[0-9]{4}"]
    gate = Gate(patterns, str(cache))
    assert gate.matching_by_line(b"x ZZZ1234 y") == [(0, 11, frozenset({1}))]
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    from abcd_daemon.scanner import gate as gate_mod

    gate_mod._database.cache_clear()
    again = Gate(patterns, str(cache))  # the same patterns, now loaded from disk
    assert again.matching_by_line(b"a\nglpat-" + b"a" * 20 + b"\nb") == [(2, 28, frozenset({0}))]


def test_a_cache_file_someone_else_could_write_is_ignored(tmp_path):
    cache = tmp_path / "cache"
    Gate([r"qq[0-9]{3}"], str(cache))
    (blob,) = cache.iterdir()
    os.chmod(blob, 0o666)
    from abcd_daemon.scanner import gate as gate_mod

    assert gate_mod._load(str(cache), blob.name) is None
    os.chmod(blob, 0o600)
    os.chmod(cache, 0o777)  # a directory others could write into is refused as well
    assert gate_mod._load(str(cache), blob.name) is None


# --- what the gate may take: superset patterns, hand gates, the prefilter split ---

import random  # noqa: E402
import re  # noqa: E402

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from abcd_daemon.scanner.gate import superset_pattern, word_prefix_except  # noqa: E402
from abcd_daemon.scanner.linear import compile_linear, fast_linear  # noqa: E402
from abcd_daemon.scanner.values import HARNESS_ID_PREFIXES  # noqa: E402


@pytest.mark.parametrize("regex, expected", [
    (r"\bab\B", "ab"),
    (r"^a$", "a"),
    (r"(?<![A-Za-z])x(?=[0-9])(?!z)", "x"),
    (r"(?P<secret>[a-z]+)", "(?:[a-z]+)"),
    (r"a{,3}", "a{0,3}"),
    (r"[\b^$]x", r"[\b^$]x"),  # inside a class nothing is an assertion
    (r"(?>ab)c++", "(?:ab)c+"),
    ("é", r"\xc3\xa9"),
    (r"x{a}", r"x\{a}"),
])
def test_superset_patterns_drop_every_assertion(regex, expected):
    assert superset_pattern(regex) == expected


@pytest.mark.parametrize("regex", [r"(a)\1", r"(?P<n>a)(?P=n)", r"(?(1)a|b)", r"\b*a", r"(?=a)+b", "(?x) a b",
                                   "(?ix:a b)"])
def test_a_pattern_without_a_known_superset_is_not_gated(regex):
    assert superset_pattern(regex) is None


def test_every_own_rule_has_a_superset_gate(scanner):
    """Every bundled rule is gated but the identity literals, additions and the rules
    that say ``gated=False`` (searched over every line instead)."""
    ungated = {scanner.rules[ci].source for ci in range(len(scanner.rules))
               if ci not in scanner._gated_pos and scanner.rules[ci].gated}
    assert ungated <= {"identity.home", "identity.emails", "identity.names", "identity.github", "identity.user"}
    by_choice = [r.name for r in scanner.rules if not r.gated]
    assert by_choice == ["bare_token"]


def test_the_harness_prefix_complement_is_exact():
    rx = re.compile("(?:" + word_prefix_except(HARNESS_ID_PREFIXES) + ")")
    shape = re.compile(r"[A-Za-z][A-Za-z0-9]{1,15}[_.-]")
    words = [w.decode() for w in HARNESS_ID_PREFIXES]
    rng = random.Random(7)
    for _ in range(20000):
        if rng.random() < 0.4:
            s = "".join(c.upper() if rng.random() < 0.5 else c for c in rng.choice(words))
            if rng.random() < 0.3:
                s = s[:-1] + rng.choice("_.-")
            if rng.random() < 0.2:
                s = s[:-1] + rng.choice("aX1") + s[-1]
        else:
            s = "".join(rng.choice("tTolumsgreq1_.-aA") for _ in range(rng.randint(1, 18)))
        assert bool(rx.fullmatch(s)) == (bool(shape.fullmatch(s)) and s.lower().encode() not in HARNESS_ID_PREFIXES), s


def test_the_fast_re2_path_matches_like_the_wrapper(scanner, fixtures_dir):
    text = b"".join(p.read_bytes() for p in sorted(fixtures_dir.rglob("*.jsonl"))[:10])
    text += b"\nwhsec_Rn3vVDoPFw3uLYYeLC6GK4RgXBtsxw3I ghp_" + b"a1B2" * 9 + b"\n"
    rules = [r for r in scanner.rules if r.source in ("provider", "generic")][::7]
    for r in rules:
        slow, fast = compile_linear(r.regex), fast_linear(r.regex)
        pos = 0
        for _ in range(50):
            a, b = slow.search(text, pos, len(text)), fast.search(text, pos, len(text))
            assert (a is None) == (b is None), r.name
            if a is None:
                break
            assert [a.span(g) for g in range(slow.groups + 1)] == [b.span(g) for g in range(slow.groups + 1)]
            assert a.group(slow.groups) == b.group(slow.groups)
            assert (a.group() == b.group()) and slow.match(text, a.start()).span() == fast.match(text, a.start()).span()
            pos = a.end() + 1


_pieces = st.sampled_from([
    "ghp_" + "a1B2" * 9, "2025-06-14T10:22:33.123Z", "fe80::3e22:fbff:fe1a:2b3c", "2606:4700:1:2:3:4:5:6",
    "::1", "toolu_01Xk29qLm7Tz4vBn8RcW1yHs5d", "msg_01HxQ7vK2mPq9RtZ8wYbN3cD", "whsec_Rn3vVDoPFw3uLYYeLC6GK4RgXBtsxw3I",
    "ab_Cd1.Tk29qLm7Tz4vBn8RcW1yHs5d", "password=", "api_key=", "**********", "Zq8mR2kW4xT7", "\\\"", '"', " ", "\n",
    "-", "_", ".", "x", "9", "jane.doe@acme-corp.io", "10.1.2.3", "/home/zed/y", "nas.local", "3c:22:fb:1a:2b:3c",
    "-----BEGIN RSA PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "\\u0067hp_", "%2F", "--token ",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=30))
def test_the_gate_hides_no_finding_on_generated_text(scanner, pieces):
    """Gated (superset patterns, the hand gates of net_ipv6, prefixed_token and the
    stars-only values, the split prefilter) and ungated scans agree on text built
    from the shapes those gates reason about."""
    data = "".join(pieces).encode()
    ungated = _UNGATED.get(id(scanner))
    if ungated is None:  # (built once: setdefault would build one per example)
        ungated = _UNGATED[id(scanner)] = Scanner(scanner.rules, scanner._ctx, gated=False)
    assert _spans(scanner, data) == _spans(ungated, data)


_UNGATED: dict = {}
