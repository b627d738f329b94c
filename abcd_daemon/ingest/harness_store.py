"""Claude Code's own store, as the harness lays it out: where its transcripts live and
how long it keeps them. The one definition of both facts.

- The config directory is ``$CLAUDE_CONFIG_DIR`` when set and non-empty, else
  ``~/.claude``; transcripts live in its ``projects/`` folder (DESIGN §4). The daemon
  follows that folder by default; ``abcd history ingest`` walks it when given no root.
- Retention: the harness deletes transcripts older (by modification time) than its
  ``cleanupPeriodDays`` setting (``settings.json`` in the config directory; 30 days when
  the file or the key is absent or unusable). A transcript's days left are that period
  minus its age, never below 0.
- A transcript found anywhere else (a live marker from a harness running with another
  config directory) belongs to the config directory holding the nearest ``projects``
  folder above it; a path with none has no known retention (``None``).
"""

from __future__ import annotations

import os

import msgspec

from ..errors import UNDECODABLE, AbcdError
from ..fsio.guarded import read_guarded
from ..limits import CONFIG_CAP

ENV = "CLAUDE_CONFIG_DIR"
DEFAULT_CONFIG_DIR = "~/.claude"
PROJECTS = "projects"
SETTINGS = "settings.json"
RETENTION_KEY = "cleanupPeriodDays"
#: The harness's own default when its settings name no period.
DEFAULT_RETENTION_DAYS = 30
DAY_NS = 86_400 * 10**9


def config_dir(env=None) -> str:
    """The harness's config directory, absolute."""
    env = os.environ if env is None else env
    chosen = env.get(ENV, "") or DEFAULT_CONFIG_DIR
    if chosen.startswith("~"):
        home = env.get("HOME", "") or os.path.expanduser("~")
        chosen = home.rstrip("/") + chosen[1:]
    return os.path.abspath(chosen)


def projects_root(env=None) -> str:
    """Where the harness keeps its transcripts: ``<config dir>/projects``."""
    return os.path.join(config_dir(env), PROJECTS)


def config_dir_of(path: str) -> str | None:
    """The config directory a transcript at ``path`` belongs to (the parent of the
    nearest ``projects`` folder above it), or None."""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == PROJECTS:
            return os.sep.join(parts[:i]) or os.sep
    return None


def retention_days(directory: str) -> int:
    """``cleanupPeriodDays`` from ``<directory>/settings.json``: a non-negative integer,
    else :data:`DEFAULT_RETENTION_DAYS`. Never raises."""
    try:
        data = msgspec.json.decode(read_guarded(os.path.join(directory, SETTINGS), CONFIG_CAP,
                                                what="harness settings"))
    except (AbcdError, *UNDECODABLE):
        return DEFAULT_RETENTION_DAYS
    value = data.get(RETENTION_KEY) if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return DEFAULT_RETENTION_DAYS
    return int(value)


def days_left(mtime_ns: int, now_ns: int, days: int) -> int:
    """Days (started days count whole) before a file last modified at ``mtime_ns``
    reaches ``days`` of age: ``days`` for a file written just now, 0 once it is past
    (the harness deletes it at its next start)."""
    return max(0, -((now_ns - mtime_ns - days * DAY_NS) // DAY_NS))


class Retention:
    """Days left per transcript, reading each config directory's settings once."""

    def __init__(self) -> None:
        self._days: dict[str, int] = {}

    def days(self, path: str) -> int | None:
        """The retention period of the store holding ``path``, or None when unknown."""
        directory = config_dir_of(path)
        if directory is None:
            return None
        if directory not in self._days:
            self._days[directory] = retention_days(directory)
        return self._days[directory]

    def days_left(self, path: str, mtime_ns: int, now_ns: int) -> int | None:
        days = self.days(path)
        return None if days is None else days_left(mtime_ns, now_ns, days)


def coverage_roots(config, env=None) -> list[str]:
    """Every root ``abcd history missing`` accounts for, absolute, each once: the harness
    store (followed or not: its retention deletes transcripts either way), then the
    configured ``watch_roots``."""
    roots = [projects_root(env)]
    roots += [os.path.abspath(os.path.expanduser(r)) for r in config.watch_roots]
    return list(dict.fromkeys(roots))


def followed_roots(config, env=None) -> list[str]:
    """Every root the daemon follows: :func:`coverage_roots` without the harness store
    when ``watch_harness_store`` is off."""
    roots = coverage_roots(config, env)
    return roots if config.watch_harness_store else [r for r in roots if r != projects_root(env)]
