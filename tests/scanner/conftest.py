"""Scanner test helpers: a fixed identity, so no test depends on the machine's HOME."""

from __future__ import annotations

import pytest

from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.scanner.bundled import EXAMPLE_IDENTITY


@pytest.fixture(scope="session")
def identity() -> Identity:
    return Identity(**EXAMPLE_IDENTITY)


@pytest.fixture(scope="session")
def scanner(identity):
    sc = build_scanner(identity)
    assert sc.degraded == ""
    return sc
