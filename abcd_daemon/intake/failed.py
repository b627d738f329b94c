"""``spool/failed/``: payloads intake could not use, each kept with its reason.

A failed payload is the harness's unredacted text, exactly like a staged transcript,
and is treated like one (DESIGN §3.2 step 8, invariants 2–4):
- owner-only: the directory 0700, the payload and its ``.reason`` 0600;
- counted in every backlog survey (``abcd history staged``, ``abcd daemon status``,
  ``status.json`` and so the session-start notice) and listed with its reason;
- never removed by age — only by a verb: :func:`retry_failed` puts it back through the
  same intake (``take``): staged, failed again with a fresh reason, or dropped as an
  event abcd does not handle; :func:`discard_failed` deletes it and its reason.
A payload is named by its spool id (the file name without ``.json``), the file name,
or a unique prefix of at least :data:`PREFIX_MIN` characters of either.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Callable

import msgspec

from ..errors import UNDECODABLE, AbcdError, InputError, NotFoundError
from ..fsio.atomic import fsync_dir
from ..fsio.guarded import read_guarded
from ..limits import PAYLOAD_CAP, SIDECAR_CAP
from ..paths import Home
from ..shim import EVENTS
from ..store.record import format_rfc3339_ns
from .spool import HEADER_CAP, REASON_SUFFIX, SpoolHeader

PREFIX_MIN = 6
#: What a spool id looks like (the shim's ``<ns>-<pid>-<hex>``); other ``.json`` names
#: in spool/failed are still listed, by file name.
SPOOL_ID_RE = re.compile(r"[0-9]{20}-[0-9]+-[0-9a-f]{8}")


class FailedPayload(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    name: str
    path: str
    bytes: int
    event: str = ""
    failed_at: str = ""
    reason: str = ""
    reason_path: str = ""
    error: str = ""


class FailedDiscard(msgspec.Struct, kw_only=True):
    path: str
    bytes: int
    removed: list[str]


def looks_like_failed_name(key: str) -> bool:
    """True when ``key`` names a failed payload rather than a staged ``.raw`` entry."""
    return key.endswith(".json") or SPOOL_ID_RE.match(key) is not None


def _names(home: Home) -> list[str]:
    try:
        names = os.listdir(home.spool_failed)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("."))


def describe_failed(home: Home, name: str) -> FailedPayload:
    """List one failed payload (reads its header line and reason, never more)."""
    path = home.spool_failed / name
    entry = FailedPayload(id=name[: -len(".json")], name=name, path=str(path), bytes=0)
    try:
        st = os.lstat(path)
    except OSError:
        entry.error = "the failed payload vanished while it was listed"
        return entry
    entry.bytes = st.st_size
    entry.failed_at = format_rfc3339_ns(st.st_mtime_ns)
    if not stat.S_ISREG(st.st_mode):
        entry.error = "not a regular file; `abcd history discard` removes it"
        return entry
    try:
        head = read_guarded(path, PAYLOAD_CAP + HEADER_CAP, what="failed payload", head=HEADER_CAP)
        header = msgspec.json.decode(head.partition(b"\n")[0], type=SpoolHeader)
        entry.event = header.event if header.event in EVENTS else ""
    except (AbcdError, *UNDECODABLE):
        pass  # the reason says what is wrong with it
    reason_path = home.spool_failed / (name + REASON_SUFFIX)
    try:
        entry.reason = read_guarded(reason_path, SIDECAR_CAP, what="reason").decode(
            "utf-8", "replace").strip()
        entry.reason_path = str(reason_path)
    except AbcdError as exc:
        entry.error = str(exc)
    return entry


def list_failed(home: Home) -> list[FailedPayload]:
    """Every failed payload, oldest first (spool ids sort by arrival)."""
    return [describe_failed(home, name) for name in _names(home)]


def failed_totals(home: Home) -> tuple[int, int]:
    """(count, bytes) of spool/failed, from one listing and an lstat per payload."""
    count = total = 0
    for name in _names(home):
        try:
            total += os.lstat(home.spool_failed / name).st_size
            count += 1
        except OSError:
            pass
    return count, total


def resolve_failed(home: Home, key: str) -> str:
    """The file name in spool/failed that ``key`` names. Raises InputError for a key
    that is no name (a path, a glob) or an ambiguous prefix, NotFoundError for none."""
    if not key or "/" in key or "\0" in key or key.startswith(".") or len(key) > 255:
        raise InputError(f"{key!r} is not a failed payload's id (see `abcd history staged`)")
    names = _names(home)
    stem = key[: -len(".json")] if key.endswith(".json") else key
    if stem + ".json" in names:
        return stem + ".json"
    matches = [n for n in names if n.startswith(stem)] if len(stem) >= PREFIX_MIN else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise InputError(f"{key!r} is a prefix of {len(matches)} failed payloads; give more of the id")
    raise NotFoundError(f"no failed payload {key!r} in spool/failed",
                        hint="`abcd history staged` lists them")


def _unlink_reason(home: Home, name: str) -> str:
    reason = home.spool_failed / (name + REASON_SUFFIX)
    try:
        os.unlink(reason)
    except FileNotFoundError:
        return ""
    return str(reason)


def retry_failed(home: Home, keys: list[str], *, everything: bool,
                 take_one: Callable[[str], object]) -> list:
    """Put the named failed payloads (or all of them) back through intake.

    ``take_one(path)`` is intake's take of one spooled file; it is given the payload
    where it lies, so a kill at any instant leaves it in spool/failed (retried again
    later) or taken. A payload intake consumed loses its stale reason; one it refuses
    again gets a fresh reason in place. Returns intake's outcomes, in order."""
    names = _names(home) if everything else list(dict.fromkeys(resolve_failed(home, k) for k in keys))
    outcomes = []
    for name in names:
        path = home.spool_failed / name
        outcome = take_one(str(path))
        if not os.path.lexists(path):
            _unlink_reason(home, name)
            fsync_dir(home.spool_failed)
        outcomes.append(outcome)
    return outcomes


def discard_failed(home: Home, key: str) -> FailedDiscard:
    """Delete one failed payload and its reason, irreversibly."""
    name = resolve_failed(home, key)
    path = home.spool_failed / name
    st = os.lstat(path)
    removed = []
    try:
        os.unlink(path)
        removed.append(str(path))
    except FileNotFoundError:
        pass
    if reason := _unlink_reason(home, name):
        removed.append(reason)
    fsync_dir(home.spool_failed)
    return FailedDiscard(path=str(path), bytes=st.st_size, removed=removed)


def sweep_orphan_reasons(home: Home) -> int:
    """Remove ``.reason`` files whose payload is gone (a retry killed between its two
    unlinks). Call where no taker runs (the daemon at start, under its lock)."""
    try:
        names = set(os.listdir(home.spool_failed))
    except OSError:
        return 0
    removed = 0
    for name in names:
        if name.endswith(REASON_SUFFIX) and name[: -len(REASON_SUFFIX)] not in names:
            try:
                os.unlink(home.spool_failed / name)
                removed += 1
            except OSError:
                pass
    return removed
