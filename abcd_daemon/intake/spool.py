"""The spool: ``spool/new/<id>.json`` files written by the shim, taken in arrival order.

A spooled file is one header line (JSON: ``abcd_spool``, ``event``, ``received_ns``,
``cwd``, ``over_cap``) and the payload bytes exactly as the harness sent them. The file
name is the id (its zero-padded nanosecond prefix sorts by arrival), so taking a file
twice is harmless: every step after it is idempotent and the file is removed last.
"""

from __future__ import annotations

import errno
import os

import msgspec

from ..errors import UNDECODABLE
from ..fsio.atomic import atomic_write, fsync_dir
from ..fsio.dirs import ensure_chain
from ..fsio.guarded import read_guarded
from ..limits import PAYLOAD_CAP
from ..paths import Home

HEADER_CAP = 64 << 10
#: Beside ``spool/failed/<name>``: why intake could not use it.
REASON_SUFFIX = ".reason"


class SpoolHeader(msgspec.Struct):
    abcd_spool: int
    event: str
    received_ns: int = 0
    cwd: str = ""
    over_cap: bool = False


class SpoolItem(msgspec.Struct, kw_only=True):
    name: str
    path: str
    header: SpoolHeader | None
    payload: bytes
    error: str = ""


def spool_dirs(home: Home, extra: list[str] = ()) -> list[str]:
    """Every ``new/`` directory intake sweeps: the home's, then the shim's fallbacks."""
    dirs = [str(home.spool_new)]
    dirs += [os.path.join(spool, "new") for spool in extra]
    return dirs


def list_spool(directories: list[str]) -> list[str]:
    """Paths of spooled files across ``directories``, in arrival order."""
    found = []
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        found += [(n, os.path.join(directory, n)) for n in names
                  if n.endswith(".json") and not n.startswith(".")]
    return [path for _, path in sorted(found)]


def read_item(path: str) -> SpoolItem:
    """Parse one spooled file. Never raises; ``error`` says what is unusable."""
    name = os.path.basename(path)
    try:
        data = read_guarded(path, PAYLOAD_CAP + HEADER_CAP, what="spooled payload")
    except Exception as exc:  # noqa: BLE001 - reported, never fatal
        return SpoolItem(name=name, path=path, header=None, payload=b"", error=str(exc))
    line, _, payload = data.partition(b"\n")
    try:
        header = msgspec.json.decode(line, type=SpoolHeader)
    except UNDECODABLE as exc:
        return SpoolItem(name=name, path=path, header=None, payload=data,
                         error=f"the spooled file has no valid abcd header ({exc})")
    return SpoolItem(name=name, path=path, header=header, payload=payload)


def move_to_failed(home: Home, path: str, reason: str) -> str:
    """Move a spooled file to ``spool/failed/`` with ``<name>.reason`` beside it (the
    reason first). Returns the new path. Nothing is deleted: a payload in a fallback
    spool on another filesystem is copied (0600, durably) before its original goes.
    ``spool/failed`` holds unredacted text, so it is kept owner-only (it is abcd's own
    directory, the one kind abcd may chmod)."""
    failed = ensure_chain(home.root, "spool", "failed")
    if os.lstat(failed).st_mode & 0o077:
        os.chmod(failed, 0o700)
    name = os.path.basename(path)
    atomic_write(failed / (name + REASON_SUFFIX), reason.encode("utf-8", "replace") + b"\n")
    target = failed / name
    try:
        os.replace(path, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        atomic_write(target, read_guarded(path, PAYLOAD_CAP + HEADER_CAP, what="spooled payload"))
        os.unlink(path)
        fsync_dir(os.path.dirname(path))
    fsync_dir(failed)
    return str(target)
