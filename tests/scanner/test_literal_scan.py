"""``literal_scan.LiteralSet``: every occurrence of a set of literals, the same with or
without Vectorscan."""

from __future__ import annotations

import random

import pytest

from abcd_daemon.scanner import literal_scan
from abcd_daemon.scanner.literal_scan import LiteralSet


def _naive(text: bytes, patterns: list[bytes], caseless: bool) -> list[tuple[int, int, int]]:
    hay = text.lower() if caseless else text
    out = []
    for k, p in enumerate(patterns):
        p = p.lower() if caseless else p
        i = hay.find(p)
        while i >= 0:
            out.append((i, -(i + len(p)), k))
            i = hay.find(p, i + 1)
    return sorted(out)


@pytest.mark.parametrize("caseless", [False, True])
@pytest.mark.parametrize("native", [True, False])
def test_every_occurrence_overlapping_ones_too_with_or_without_vectorscan(monkeypatch, caseless, native):
    if not native:
        monkeypatch.setattr(literal_scan, "hyperscan", None)
    rng = random.Random(7)
    patterns = [b"abab", b"ba", b"Xk29\x00q", b"/home/Zed", b"\\/home\\/zed"]
    pieces = [b"ab", b"ba", b"Xk29\x00q", b"/HOME/zed", b"\\/home\\/Zed", b"\xc3\xa9", b" ", b"x"]
    text = b"".join(rng.choice(pieces) for _ in range(4000))
    got = LiteralSet(patterns, caseless=caseless).find(text)
    assert got == _naive(text, patterns, caseless)
    assert got  # the text holds some of each kind


def test_a_set_vectorscan_refuses_is_found_by_the_automaton(monkeypatch):
    class Refusing:
        def compile(self, **_kw):
            raise RuntimeError("no")

    monkeypatch.setattr(literal_scan.hyperscan, "Database", Refusing)
    assert LiteralSet([b"tok"]).find(b"a tok, a tok") == [(2, -5, 0), (9, -12, 0)]
