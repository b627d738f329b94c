"""What a CLI verb needs from the core, built once per invocation: home, config,
current lane, clock. Errors surface as AbcdError for :func:`output.fail`."""

from __future__ import annotations

import functools
import os
import time

from abcd_daemon.config import Config, load_config
from abcd_daemon.locate.git import repo_root_and_sha
from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane


def home() -> Home:
    return Home.from_env()


@functools.cache
def config() -> Config:
    return load_config(home().config_file)


def checkout(cwd: str | None = None) -> tuple[str, Lane]:
    """(checkout root, lane) of the repository containing ``cwd`` (default: cwd)."""
    root, sha = repo_root_and_sha(cwd or os.getcwd())
    return str(root), Lane(home(), sha)


def now_ns() -> int:
    return time.time_ns()
