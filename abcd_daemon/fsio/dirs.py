"""Owner-only directory chains, created one level at a time and re-verified.

Rule: from a chain's base (the abcd home) down, every level must be a real directory
(not a symlink, not a file) owned by this user. A missing level is created with
``mkdir(0o700)`` — never ``mkdir -p`` past the base — and an existing level keeps its
mode. Every call re-verifies every level, so a symlink planted after creation is still
refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import StorePathError

DIR_MODE = 0o700


def _check_level(path: Path) -> None:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise StorePathError(
            f"{str(path)!r} is not a real directory (a symlink or a non-directory "
            "occupies it); refusing",
            hint="move whatever occupies that path aside; abcd never writes through it",
        )
    if st.st_uid != os.geteuid():
        raise StorePathError(
            f"{str(path)!r} is owned by uid {st.st_uid}, not by this user; refusing",
            hint="abcd keeps owner-only data; point ABCD_HOME at a directory you own",
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
