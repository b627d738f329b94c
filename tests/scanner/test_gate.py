"""The Vectorscan gate only saves work: gated and ungated scans find the same spans."""

from __future__ import annotations

import json
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
