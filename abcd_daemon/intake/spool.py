"""The spools: ``<spool>/new/<id>.json`` files written by the shim, taken in arrival order.

A spooled file is one header line (JSON: ``abcd_spool``, ``event``, ``received_ns``,
``cwd``, ``over_cap``, ``cut_short``) and the payload bytes exactly as the harness sent
them. The file name is the id (its zero-padded nanosecond prefix sorts by arrival), so
taking a file twice is harmless: every step after it is idempotent and the file is
removed last.

Which spools: ``ABCD_HOME/spool`` and the shim's fallbacks (:func:`abcd_daemon.paths.spools`).
Every one is opened through :mod:`abcd_daemon.safedir` on every sweep and every take —
its first level (the home, the socket directory, ``$TMPDIR/abcd-<uid>``), the spool and
``new/`` must be real directories of this uid that nobody else can write — and entries
are read, renamed and unlinked relative to the verified ``new/`` descriptor, never by a
path another user could redirect. A spool that fails is refused: named in the listing
(and so in ``status.json``, ``abcd daemon status`` and the session-start notice), never
swept. A spooled entry must itself be a regular file of this uid.
"""

from __future__ import annotations

import contextlib
import errno
import os

import msgspec

from .. import safedir
from ..errors import UNDECODABLE, ReadRefused
from ..fsio.atomic import atomic_write
from ..fsio.guarded import read_guarded
from ..limits import PAYLOAD_CAP, SPOOL_VERSION
from ..paths import Home, spools
from ..status import RefusedSpool

HEADER_CAP = 64 << 10
SPOOLED_CAP = PAYLOAD_CAP + HEADER_CAP
#: Beside ``spool/failed/<name>``: why intake could not use it.
REASON_SUFFIX = ".reason"


class SpoolHeader(msgspec.Struct):
    abcd_spool: int
    event: str
    received_ns: int = 0
    cwd: str = ""
    over_cap: bool = False
    cut_short: bool = False


class SpoolItem(msgspec.Struct, kw_only=True):
    name: str
    path: str
    header: SpoolHeader | None
    payload: bytes
    error: str = ""
    missing: bool = False


class SpoolListing(msgspec.Struct, kw_only=True):
    paths: list[str] = []
    refused: list[RefusedSpool] = []


def spool_locations(home: Home, env=None) -> list[str]:
    """Every spool intake sweeps: the home's, then the shim's fallbacks for ``env``."""
    out = [str(home.spool)]
    return out + [s for s in spools(env)[1:] if s not in out]


@contextlib.contextmanager
def opened_new(spool: str, *, create: bool = False):
    """The verified descriptor of ``spool/new`` for the ``with`` body. Raises
    :class:`safedir.Refused` or ``FileNotFoundError``."""
    fd = safedir.open_spool(spool, ("new",), create)
    try:
        yield fd
    finally:
        os.close(fd)


def list_spool(locations: list[str]) -> SpoolListing:
    """Paths of spooled files across ``locations`` (spool directories), in arrival
    order, and the spools refused (with why). A missing spool is simply empty."""
    found: list[tuple[str, str]] = []
    out = SpoolListing()
    for spool in locations:
        try:
            with opened_new(spool) as fd:
                names = os.listdir(fd)
        except FileNotFoundError:
            continue
        except safedir.Refused as exc:  # never swept
            out.refused.append(RefusedSpool(path=spool, reason=str(exc)))
            continue
        except OSError as exc:
            out.refused.append(RefusedSpool(
                path=spool, reason=f"{spool}/new could not be listed ({exc.strerror or exc})"))
            continue
        new = os.path.join(spool, "new")
        found += [(n, os.path.join(new, n)) for n in names
                  if n.endswith(".json") and not n.startswith(".")]
    out.paths = [path for _, path in sorted(found)]
    return out


def spool_of(path: str) -> str:
    """The spool directory an entry path ``<spool>/new/<name>`` belongs to."""
    return os.path.dirname(os.path.dirname(path))


def read_item(new_fd: int, path: str) -> SpoolItem:
    """Parse the spooled entry ``path`` through its verified ``new/`` descriptor. Never
    raises; ``error`` says what is unusable (``missing`` when it is already gone)."""
    name = os.path.basename(path)
    try:
        data = read_guarded(name, SPOOLED_CAP, what="spooled payload", owner=os.geteuid(),
                            dir_fd=new_fd, shown=path)
    except ReadRefused as exc:
        return SpoolItem(name=name, path=path, header=None, payload=b"", error=str(exc),
                         missing=exc.reason == "missing")
    line, _, payload = data.partition(b"\n")
    try:
        header = msgspec.json.decode(line, type=SpoolHeader)
    except UNDECODABLE as exc:
        return SpoolItem(name=name, path=path, header=None, payload=data,
                         error=f"the spooled file has no valid abcd header ({exc})")
    if header.abcd_spool != SPOOL_VERSION:
        return SpoolItem(name=name, path=path, header=None, payload=payload, error=(
            f"the spooled file's header is version {header.abcd_spool}, and this daemon reads "
            f"version {SPOOL_VERSION} only (a shim of another abcd version wrote it); kept, "
            "not read — run the matching abcd, or recover the transcript with "
            "`abcd history ingest`"))
    return SpoolItem(name=name, path=path, header=header, payload=payload)


def remove_entry(new_fd: int, path: str) -> None:
    """Remove a taken entry (relative to its verified directory) and make that durable."""
    try:
        os.unlink(os.path.basename(path), dir_fd=new_fd)
    except FileNotFoundError:
        return
    os.fsync(new_fd)


def move_to_failed(home: Home, new_fd: int, path: str, reason: str) -> str:
    """Move a spooled entry to ``ABCD_HOME/spool/failed/`` with ``<name>.reason`` beside it
    (the reason first). Returns the new path. Nothing is deleted — except that an entry
    in a spool on another filesystem that is no regular file (a symlink, a FIFO: it holds
    no payload) cannot be carried across, and is removed with the reason saying so."""
    name = os.path.basename(path)
    failed_fd = safedir.open_spool(str(home.spool), ("failed",), create=True)
    try:
        target = home.spool_failed / name
        atomic_write(home.spool_failed / (name + REASON_SUFFIX),
                     reason.encode("utf-8", "replace") + b"\n")
        try:
            os.rename(name, name, src_dir_fd=new_fd, dst_dir_fd=failed_fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _carry_across(home, new_fd, path, reason)
        os.fsync(failed_fd)
    finally:
        os.close(failed_fd)
    return str(target)


def _carry_across(home: Home, new_fd: int, path: str, reason: str) -> None:
    """``rename`` cannot cross filesystems (a fallback spool in a tmpfs): copy the entry
    into ``failed/`` durably, then remove it from the spool."""
    name = os.path.basename(path)
    try:
        data = read_guarded(name, SPOOLED_CAP, what="spooled payload", dir_fd=new_fd, shown=path)
    except ReadRefused as exc:
        if exc.reason != "not-regular":
            raise OSError(errno.EXDEV, f"{path} cannot be moved to {home.spool_failed} ({exc})")
        note = f"{reason}\n(it was {exc}; nothing of a payload was in it, so it was removed)"
        atomic_write(home.spool_failed / (name + REASON_SUFFIX), note.encode("utf-8", "replace") + b"\n")
        data = None
    if data is not None:
        atomic_write(home.spool_failed / name, data)
    os.unlink(name, dir_fd=new_fd)
    os.fsync(new_fd)
