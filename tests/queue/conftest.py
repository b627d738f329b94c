import pytest

from abcd_daemon.config import Config
from abcd_daemon.store.lane import Lane

SHA = "e" * 40
T0 = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
DAY_NS = 86400 * 10**9


@pytest.fixture
def lane(home):
    return Lane(home, SHA)


@pytest.fixture
def config():
    return Config()
