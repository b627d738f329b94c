"""The hostile-input modules share one running daemon per module (:mod:`.served`)."""

from __future__ import annotations

import pytest

from .served import Served


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("hostile"))
    yield s
    assert s.daemon.stop() == 0, s.daemon.read_log()[-3000:]


