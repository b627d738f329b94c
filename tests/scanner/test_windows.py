"""Lower-cased windows: a long line is searched a window at a time, with the same hits."""

from __future__ import annotations

import json
import random
import tracemalloc

import pytest

from abcd_daemon.scanner import redact_text, windows
from abcd_daemon.scanner.windows import lowered_windows

from .helpers import ANT, GHP


def test_windows_tile_the_range_and_hold_every_literal_that_starts_in_them():
    buf = bytes(random.Random(3).choice(b"abcXYZ\n") for _ in range(1000))
    tiles = list(lowered_windows(buf, 7, 993, overlap=4, step=100))
    assert [t[0] for t in tiles] == list(range(7, 993, 100))
    assert tiles[-1][2] == 993 and all(a[2] == b[0] for a, b in zip(tiles, tiles[1:]))
    for offset, low, limit in tiles:
        assert low == buf[offset : min(993, limit + 4)].lower()
    assert list(lowered_windows(buf, 5, 5)) == []


def _corpus(fixtures_dir) -> bytes:
    paths = sorted(fixtures_dir.glob("real_projects/*/*.jsonl"))[:6]
    return b"".join(p.read_bytes() for p in paths)


def test_keyword_hits_are_the_same_a_window_at_a_time(scanner, fixtures_dir, monkeypatch):
    """Hits near a window's end interleave with the next window's; they come back in
    the order one pass over the whole text gives, none lost, none twice."""
    text = _corpus(fixtures_dir)
    lines = [(0, len(text), frozenset(scanner._gated_pos.values()))]
    whole = scanner._pf.hits(text, lines)
    monkeypatch.setattr(windows, "STEP", 4096 + 1)
    assert scanner._pf.hits(text, lines) == whole
    assert scanner.scan(text) == _scan_with_default_step(scanner, text, monkeypatch)


def _scan_with_default_step(scanner, text, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(windows, "STEP", 64 << 20)
        return scanner.scan(text)


def test_the_home_backstop_finds_the_home_across_window_ends(scanner, identity, monkeypatch):
    home = identity.home.encode()
    text = b"".join(b"x" * n + home + b"/src " for n in range(0, 300, 7))
    whole = scanner.home_sweep(text)
    monkeypatch.setattr(windows, "STEP", 64)
    assert scanner.home_sweep(text) == whole and len(whole) == 43


def _long_line(n_words: int) -> bytes:
    rng = random.Random(5)
    words = ["the", "quick", "brown", "fox", "reads", "a\\/b", "then\nline", f"token={GHP}", f"key {ANT}"]
    content = " ".join(rng.choice(words) if rng.random() < 0.02 else rng.choice(words[:5])
                       for _ in range(n_words))
    return json.dumps({"type": "user", "message": {"content": [{"type": "tool_result",
                                                                 "content": content}]}}).encode()


@pytest.mark.parametrize("step", [256 << 10])
def test_redacting_a_long_line_holds_a_few_copies_of_it_and_one_window(scanner, monkeypatch, step):
    """Memory is set by the longest line: the scanner keeps at most three and a half copies of it
    (folded, masked, spaced) and one lower-cased window — not a lower-cased copy of
    the whole line, a second copy for the JSON check, or the line copied for the gate."""
    monkeypatch.setattr(windows, "STEP", step)
    # ~1.5 MiB: six windows, and long enough that one more copy of it breaks the bound
    # (tracemalloc makes the scan ~50× slower: the line is no longer than it must be)
    line = _long_line(300_000)
    redact_text(scanner, line[:10000])
    tracemalloc.start()
    try:
        out = redact_text(scanner, line)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert GHP.encode() not in out.text and json.loads(out.text)
    assert peak <= 3.5 * len(line) + step, (peak - step) / len(line)  # (measured: 3.0)
