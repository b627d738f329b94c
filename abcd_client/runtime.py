"""What a CLI verb needs from the core, built once per invocation: home, config,
current lane, clock. Errors surface as AbcdError for :func:`output.fail`."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from abcd_daemon.config import Config, load_config
from abcd_daemon.locate.git import repo_root_and_sha
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane


def home() -> Home:
    return Home.from_env()


def config() -> Config:
    """The configuration of the current home (read per call: a CLI call reads it once)."""
    return _config_at(str(home().config_file))


@functools.lru_cache(maxsize=4)
def _config_at(path: str) -> Config:
    return load_config(Path(path))


def checkout(cwd: str | None = None) -> tuple[str, Lane]:
    """(checkout root, lane) of the repository containing ``cwd`` (default: cwd)."""
    root, sha = repo_root_and_sha(cwd or os.getcwd())
    return str(root), Lane(home(), sha)


def now_ns() -> int:
    return time.time_ns()
