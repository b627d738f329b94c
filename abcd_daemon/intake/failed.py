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

``spool/failed`` is opened by descriptor and verified on every open
(:mod:`abcd_daemon.safedir`), and every entry is read, moved and removed relative to
that descriptor, like the spools themselves.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from typing import Callable

import msgspec

from .. import safedir
from ..errors import UNDECODABLE, AbcdError, InputError, NotFoundError
from ..fsio.guarded import read_guarded
from ..ids import PREFIX_MIN
from ..limits import SIDECAR_CAP
from ..paths import Home
from ..shim import EVENTS
from ..store.record import format_rfc3339_ns
from .outcome import FailedDiscard, FailedPayload
from .spool import HEADER_CAP, REASON_SUFFIX, SPOOLED_CAP, SpoolHeader

#: What a spool id looks like (the shim's ``<ns>-<pid>-<hex>``); other ``.json`` names
#: in spool/failed are still listed, by file name.
SPOOL_ID_RE = re.compile(r"[0-9]{20}-[0-9]+-[0-9a-f]{8}")


def looks_like_failed_name(key: str) -> bool:
    """True when ``key`` names a failed payload rather than a staged ``.raw`` entry."""
    return key.endswith(".json") or SPOOL_ID_RE.match(key) is not None


@contextlib.contextmanager
def opened_failed(home: Home, *, create: bool = False):
    """The verified descriptor of ``spool/failed``. Raises FileNotFoundError when it
    does not exist (and ``create`` is false), :class:`safedir.Refused` when it is not
    abcd's."""
    fd = safedir.open_spool(str(home.spool), ("failed",), create)
    try:
        yield fd
    finally:
        os.close(fd)


def _names(fd: int) -> list[str]:
    return sorted(n for n in os.listdir(fd) if n.endswith(".json") and not n.startswith("."))


def _describe(home: Home, fd: int, name: str) -> FailedPayload:
    path = home.spool_failed / name
    entry = FailedPayload(id=name[: -len(".json")], name=name, path=str(path), bytes=0)
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        entry.error = "the failed payload vanished while it was listed"
        return entry
    entry.bytes = st.st_size
    entry.failed_at = format_rfc3339_ns(st.st_mtime_ns)
    if not stat.S_ISREG(st.st_mode):
        entry.error = "not a regular file; `abcd history discard` removes it"
        return entry
    try:
        head = read_guarded(name, SPOOLED_CAP, what="failed payload", head=HEADER_CAP,
                            dir_fd=fd, shown=path)
        header = msgspec.json.decode(head.partition(b"\n")[0], type=SpoolHeader)
        entry.event = header.event if header.event in EVENTS else ""
    except (AbcdError, *UNDECODABLE):
        pass  # the reason says what is wrong with it
    reason_path = home.spool_failed / (name + REASON_SUFFIX)
    try:
        entry.reason = read_guarded(name + REASON_SUFFIX, SIDECAR_CAP, what="reason", dir_fd=fd,
                                    shown=reason_path).decode("utf-8", "replace").strip()
        entry.reason_path = str(reason_path)
    except AbcdError as exc:
        entry.error = str(exc)
    return entry


def list_failed(home: Home) -> list[FailedPayload]:
    """Every failed payload, oldest first (spool ids sort by arrival). Raises
    :class:`safedir.Refused` when spool/failed is not abcd's."""
    try:
        with opened_failed(home) as fd:
            return [_describe(home, fd, name) for name in _names(fd)]
    except FileNotFoundError:
        return []


def failed_totals(home: Home) -> tuple[int, int]:
    """(count, bytes) of spool/failed, from one listing and an lstat per payload."""
    count = total = 0
    try:
        with opened_failed(home) as fd:
            for name in _names(fd):
                try:
                    total += os.stat(name, dir_fd=fd, follow_symlinks=False).st_size
                    count += 1
                except OSError:
                    pass
    except OSError:  # missing, or refused (status names refused spools)
        pass
    return count, total


def _resolve(fd: int, key: str) -> str:
    if not key or "/" in key or "\0" in key or key.startswith(".") or len(key) > 255:
        raise InputError(f"{key!r} is not a failed payload's id (see `abcd history staged`)")
    names = _names(fd)
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


def _unlink_reason(fd: int, name: str) -> bool:
    try:
        os.unlink(name + REASON_SUFFIX, dir_fd=fd)
        return True
    except FileNotFoundError:
        return False


def retry_failed(home: Home, keys: list[str], *, everything: bool,
                 take_one: Callable[[str], object]) -> list:
    """Put the named failed payloads (or all of them) back through intake: each is
    renamed into ``ABCD_HOME/spool/new`` (durably, then its stale reason removed) and
    given to ``take_one(path)``, intake's take of one spooled entry. A kill at any
    instant leaves it in spool/failed or spool/new — never nowhere; a payload intake
    refuses again is back in spool/failed with a fresh reason. Returns intake's
    outcomes, in order. The caller serialises this with its intake loop."""
    try:
        with opened_failed(home) as fd:
            names = _names(fd) if everything else list(dict.fromkeys(_resolve(fd, k) for k in keys))
            new_fd = safedir.open_spool(str(home.spool), ("new",), True)
            try:
                moved = []
                for name in names:
                    os.rename(name, name, src_dir_fd=fd, dst_dir_fd=new_fd)
                    os.fsync(new_fd)
                    _unlink_reason(fd, name)
                    os.fsync(fd)
                    moved.append(name)
            finally:
                os.close(new_fd)
    except FileNotFoundError:
        if everything:
            return []
        raise NotFoundError(f"no failed payload {keys[0]!r}: spool/failed is empty",
                            hint="`abcd history staged` lists them") from None
    return [take_one(str(home.spool_new / name)) for name in moved]


def discard_failed(home: Home, key: str) -> FailedDiscard:
    """Delete one failed payload and its reason, irreversibly."""
    try:
        with opened_failed(home) as fd:
            name = _resolve(fd, key)
            size = os.stat(name, dir_fd=fd, follow_symlinks=False).st_size
            removed = []
            try:
                os.unlink(name, dir_fd=fd)
                removed.append(str(home.spool_failed / name))
            except FileNotFoundError:
                pass
            if _unlink_reason(fd, name):
                removed.append(str(home.spool_failed / (name + REASON_SUFFIX)))
            os.fsync(fd)
    except FileNotFoundError:
        raise NotFoundError(f"no failed payload {key!r}: spool/failed is empty",
                            hint="`abcd history staged` lists them") from None
    return FailedDiscard(path=str(home.spool_failed / name), bytes=size, removed=removed)


def sweep_orphan_reasons(home: Home) -> int:
    """Remove ``.reason`` files whose payload is gone (a retry killed between its rename
    and its unlink). Call where no taker runs (the daemon at start, under its lock)."""
    removed = 0
    try:
        with opened_failed(home) as fd:
            names = set(os.listdir(fd))
            for name in names:
                if name.endswith(REASON_SUFFIX) and name[: -len(REASON_SUFFIX)] not in names:
                    try:
                        os.unlink(name, dir_fd=fd)
                        removed += 1
                    except OSError:
                        pass
    except OSError:
        pass
    return removed
