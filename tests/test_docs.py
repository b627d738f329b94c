"""The documents cite tests that exist: every ``tests/…py`` and ``tests/…py::name`` named
in the README and docs/architecture.md is a real file and a real test in it, so the map
of what is tested cannot silently go stale."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_documents_cite_exists():
    cited = []
    for doc in ("README.md", "docs/architecture.md"):
        cited += [(doc, *m) for m in CITED.findall((ROOT / doc).read_text())]
    assert len(cited) > 20
    missing = []
    for doc, path, name in cited:
        source = ROOT / path
        if not source.is_file():
            missing.append(f"{doc}: {path}")
        elif name and not re.search(rf"^(async )?def {name}\(", source.read_text(), re.M):
            missing.append(f"{doc}: {path}::{name}")
    assert missing == []


def test_the_readme_cites_the_architecture_document():
    assert "docs/architecture.md" in (ROOT / "README.md").read_text()
