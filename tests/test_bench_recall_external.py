"""``bench/recall.py --examples FILE``: an outside labelled set measured like the
generated corpus (``bench/recall_corpus/external.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from recall_corpus.external import load
    finally:
        sys.path.pop(0)
    return load(path)


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


POSITIVE = {"family": "ex:gitlab", "positive": True, "text": "GITLAB_TOKEN=glpat-Zq8mR2kW4xT7pL9sYfQ3",
            "secret": "glpat-Zq8mR2kW4xT7pL9sYfQ3", "prefix": "glpat-"}
NEGATIVE = {"family": "ex:gitlab", "positive": False, "text": "the token lives in GITLAB_TOKEN_FILE"}


def test_a_file_of_labelled_lines_loads_as_positives_and_negatives(tmp_path):
    corpus = _load(_write(tmp_path / "x.jsonl", [POSITIVE, "", NEGATIVE]))
    assert [e.secret for e in corpus.positives] == [POSITIVE["secret"]]
    assert corpus.positives[0].body == "Zq8mR2kW4xT7pL9sYfQ3"
    assert [e.secret for e in corpus.negatives] == [NEGATIVE["text"]]  # no secret: the whole text


@pytest.mark.parametrize("bad, why", [
    ("{not json", "not a labelled example"),
    (json.dumps({**POSITIVE, "secret": "not in the text"}), "not a substring"),
    (json.dumps({**POSITIVE, "positive": "yes"}), "must be true or false"),
])
def test_a_broken_line_is_named_by_its_number_and_nothing_is_measured(tmp_path, bad, why):
    with pytest.raises(ValueError) as err:
        _load(_write(tmp_path / "x.jsonl", [POSITIVE, bad]))
    assert "x.jsonl:2: " in str(err.value) and why in str(err.value)


@pytest.mark.slow
def test_the_bench_measures_the_file_through_the_real_cli(tmp_path):
    path = _write(tmp_path / "x.jsonl", [POSITIVE, NEGATIVE])
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "recall.py"), "--examples", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    last = json.loads(res.stdout.strip().splitlines()[-1])
    assert (last["recall"], last["fp_rate"], last["refused"], last["json_valid"]) == (1.0, 0.0, 0.0, 1.0)
    assert (last["examples"], last["negatives"], last["lines"]) == (1, 1, 12)  # each in the six contexts
    bad = _write(tmp_path / "bad.jsonl", ["{"])
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "recall.py"), "--examples", str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "bad.jsonl:1: not a labelled example" in res.stderr
