"""What a CLI verb needs from the core, built once per invocation: home, config,
current lane, clock. Errors surface as AbcdError for :func:`output.fail`.

The core modules are imported inside each function: a verb that needs only the home
(or only the clock) does not pay for the config parser or git at start-up."""

from __future__ import annotations

import functools
import os
import time


def home():
    """The store of this environment (``ABCD_HOME``), an :class:`abcd_daemon.paths.Home`."""
    from abcd_daemon.paths import Home

    return Home.from_env()


def config():
    """The configuration of the current home (read per call: a CLI call reads it once)."""
    return _config_at(str(home().config_file))


@functools.lru_cache(maxsize=4)
def _config_at(path: str):
    from pathlib import Path

    from abcd_daemon.config import load_config

    return load_config(Path(path))


def checkout(cwd: str | None = None):
    """(checkout root, lane) of the repository containing ``cwd`` (default: cwd)."""
    from abcd_daemon.locate.git import repo_root_and_sha
    from abcd_daemon.store.lane import Lane

    root, sha = repo_root_and_sha(cwd or os.getcwd())
    return str(root), Lane(home(), sha)


def lane(cwd: str | None = None):
    """The lane of the repository containing ``cwd`` (default: cwd), for verbs that do
    not need the checkout's path: HEAD's root commit, remembered per commit, so most
    calls run no ``git`` at all (:mod:`abcd_daemon.locate.root_cache`)."""
    from abcd_daemon.locate.root_cache import lane_root
    from abcd_daemon.store.lane import Lane

    return Lane(home(), lane_root(cwd or os.getcwd()))


def lane_key(cwd: str | None = None) -> str:
    """``lane(cwd).root_sha`` without building the Lane (nor importing the store and
    pathlib): all a verb that names its repository to the daemon needs."""
    from abcd_daemon.ids import check_root_sha
    from abcd_daemon.locate.root_cache import lane_root

    return check_root_sha(lane_root(cwd or os.getcwd()))


def now_ns() -> int:
    return time.time_ns()
