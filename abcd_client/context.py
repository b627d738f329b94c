"""Which store a CLI verb works on (kept for callers; see :mod:`.runtime`)."""

from __future__ import annotations

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane

from . import runtime


def current_home() -> Home:
    return runtime.home()


def current_lane(cwd: str | None = None) -> Lane:
    """The lane of the repository containing ``cwd`` (default: the process cwd).
    Raises NotARepository (an InputError) outside a git checkout."""
    return runtime.checkout(cwd)[1]
