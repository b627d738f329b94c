"""Identifiers that become file names: one rule for all of them.

An id (session, agent, parent agent) is ``[A-Za-z0-9._-]+``, at most
:data:`~abcd_daemon.limits.ID_MAX_LEN` characters, and does not start with ``.``
(names starting with a dot are abcd's own temp and lock files; ``.`` and ``..`` would
climb). Anything else is refused, never cleaned up: a cleaned id would name a
different file.
"""

from __future__ import annotations

import re

from .errors import InputError
from .limits import ID_MAX_LEN

#: The shortest prefix that stands for a whole id (session, agent, failed payload), as
#: git takes a short hash: long enough to be unique in any one user's corpus.
PREFIX_MIN = 6
ROOT_SHA_RE = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})")
_ID_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def is_valid_id(value: object) -> bool:
    """True when ``value`` is a string that is a safe id."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= ID_MAX_LEN
        and _ID_RE.fullmatch(value) is not None
    )


def check_id(value: object, what: str) -> str:
    """Return ``value`` if it is a safe id, else raise :class:`InputError` naming ``what``."""
    if is_valid_id(value):
        return value  # type: ignore[return-value]
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    raise InputError(
        f"{what} {shown} is not a usable id: ids are 1-{ID_MAX_LEN} characters of "
        "A-Z a-z 0-9 . _ - and do not start with '.'",
        hint="an id becomes a file name, so it is refused rather than cleaned up",
    )


def check_root_sha(value: object) -> str:
    """Return ``value`` if it is a 40- or 64-character lowercase hex commit SHA."""
    if isinstance(value, str) and ROOT_SHA_RE.fullmatch(value):
        return value
    raise InputError(
        f"root commit {value!r} must be a 40- or 64-character lowercase hex commit SHA"
    )
