"""Owner-only directory chains, created one level at a time and re-verified.

Rule: from a chain's base (the abcd home) down, every level must be a real directory
(not a symlink, not a file) owned by this user and not group- or world-writable
(:func:`abcd_daemon.safedir.problem`, the one definition of that rule). A missing level is created with
``mkdir(0o700)`` — never ``mkdir -p`` past the base — and an existing level keeps its
mode. Every call re-verifies every level, so a symlink planted after creation is still
refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StorePathError
from ..paths import DIR_MODE
from ..safedir import problem


def _check_level(path: Path) -> None:
    why = problem(os.lstat(path))
    if not why:
        return
    if why in ("is a symlink", "is not a directory"):
        raise StorePathError(
            f"{str(path)!r} is not a real directory ({why[3:]}); refusing",
            hint="move whatever occupies that path aside; abcd never writes through it",
        )
    raise StorePathError(
        f"{str(path)!r} {why}; refusing",
        hint="abcd keeps owner-only data: point ABCD_HOME at a directory only you own and "
             "can write (chmod go-w, or move it aside and let abcd recreate it)",
    )


def ensure_dir(path) -> Path:
    """Create ``path`` (one level) at 0o700 if missing, then verify it. Returns it."""
    path = Path(path)
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise StorePathError(f"{str(path.parent)!r} does not exist; cannot create {path.name!r}")
    _check_level(path)
    return path


def ensure_chain(base, *parts: str) -> Path:
    """Create and verify ``base`` and each level of ``base/parts…``. Returns the leaf.

    ``base``'s own ancestors are created if missing (they are outside abcd's chain);
    ``base`` and every level below it must be real, owner-owned directories.
    Raises :class:`StorePathError` naming the offending level.
    """
    base = Path(base)
    if not base.exists() and not base.is_symlink():
        base.parent.mkdir(parents=True, exist_ok=True)
    current = ensure_dir(base)
    for part in parts:
        if not part or part in (".", "..") or "/" in part:
            raise StorePathError(f"refusing an unsafe path segment {part!r}")
        current = ensure_dir(current / part)
    return current


def verify_chain(base, *parts: str) -> Path:
    """Verify without creating. Raises :class:`StorePathError` or ``FileNotFoundError``."""
    current = Path(base)
    _check_level(current)
    for part in parts:
        current = current / part
        _check_level(current)
    return current
