"""Moving the older corpus layout into lanes (reference §5.5).

``ABCD_HOME/history/<sha>/transcripts/*.md`` → ``ABCD_HOME/transcripts/<sha>/records/``
and ``ABCD_HOME/history/<sha>/staging/*.raw`` (with any ``*.stage.json`` sidecar) →
``…/staging/``. Rules:

- A dry run (the default) reports what would happen and changes nothing.
- File by file, under the lane's records lock. A move never overwrites: the file is
  linked in under its new name (``link`` fails if the name exists), then the old name
  is removed; across filesystems it is copied to a temp file beside the destination,
  fsynced, linked into place, then the source removed. A kill at any instant leaves
  the file at its old name, or under both names with identical bytes — never nowhere,
  never half-written (invariant 8).
- An existing destination is accepted only with identical bytes (then the source is
  removed: that is how an interrupted run completes without duplicates); different
  bytes are left at both names and reported. Non-regular entries are left and reported.
- A sidecar moves before its ``.raw``, so a moved raw is never seen without its lineage.
- Bytes move verbatim (no re-redaction: records were redacted when written; staged
  files are redacted by the next drain); moved files are narrowed to 0o600.
- The tombstone ``history/<sha>/transcripts.moved`` is written only when nothing was
  left; a legacy directory with a tombstone is skipped. ``history/`` also holds another
  tool's registry (``index.json``, ``<sha>/meta.json``): only the two corpus folders
  are touched.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path

import msgspec

from ..config import Config
from ..errors import AbcdError
from ..fsio.atomic import TEMP_PREFIX, atomic_write, fsync_dir
from ..fsio.locks import file_lock
from ..ids import ROOT_SHA_RE
from ..paths import RECORDS, STAGING, Home
from ..queue.sidecar import RAW_SUFFIX, SIDECAR_SUFFIX
from ..store.lane import Lane
from ..store.record import format_rfc3339_ns

#: ``ABCD_HOME/history``: the older corpus location (and another tool's registry).
LEGACY_HISTORY = "history"
TOMBSTONE = "transcripts.moved"
LEGACY_RECORDS = "transcripts"
LEGACY_STAGING = "staging"


class MoveItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One file. ``action``: move | duplicate (identical bytes already there; the old
    copy is removed) | conflict | not-regular | failed (the last three are left)."""

    source: str
    dest: str
    action: str
    detail: str = ""


class LaneMigration(msgspec.Struct, kw_only=True):
    root_sha: str
    legacy_dir: str
    records: int = 0
    staged: int = 0
    moved: int = 0
    duplicates: int = 0
    left: list[MoveItem] = []
    items: list[MoveItem] = []
    tombstoned: bool = False
    already_moved: bool = False


class MigrateReport(msgspec.Struct, kw_only=True):
    apply: bool
    history_dir: str
    lanes: list[LaneMigration] = []

    @property
    def left(self) -> int:
        return sum(len(lane.left) for lane in self.lanes)


def _same_bytes(a: str, b: str) -> bool:
    """True when two regular files hold identical bytes (compared in chunks)."""
    try:
        if os.path.samefile(a, b):
            return True
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _classify(source: str, dest: str) -> MoveItem:
    """What applying would do with one file (reads, never writes)."""
    if not _regular(source):
        return MoveItem(source=source, dest=dest, action="not-regular",
                        detail="not a regular file (a symlink or special file); left in place")
    if not os.path.lexists(dest):
        return MoveItem(source=source, dest=dest, action="move")
    if _regular(dest) and _same_bytes(source, dest):
        return MoveItem(source=source, dest=dest, action="duplicate")
    return MoveItem(source=source, dest=dest, action="conflict",
                    detail="a different file already has this name in the lane; both are kept")


def _place(source: str, dest: str) -> None:
    """Give ``source``'s bytes the name ``dest`` without ever overwriting it. Raises
    FileExistsError when the name is taken, OSError on other failures."""
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=os.path.dirname(dest))
        try:
            with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
            os.link(tmp, dest)
        finally:
            os.unlink(tmp)
    os.chmod(dest, 0o600)
    fsync_dir(os.path.dirname(dest))


def _remove(source: str) -> None:
    os.unlink(source)
    fsync_dir(os.path.dirname(source))


def _apply(item: MoveItem) -> MoveItem:
    """Carry out one classified move. Returns the item as it ended."""
    if item.action == "move":
        try:
            _place(item.source, item.dest)
        except FileExistsError:  # appeared since it was classified: judge it again
            item = _classify(item.source, item.dest)
            if item.action != "duplicate":
                return item
        except OSError as exc:
            return MoveItem(source=item.source, dest=item.dest, action="failed",
                            detail=f"could not move ({exc.strerror}); left in place")
    if item.action in ("move", "duplicate"):
        try:
            _remove(item.source)
        except FileNotFoundError:
            pass
        except OSError as exc:
            return MoveItem(source=item.source, dest=item.dest, action="failed",
                            detail=f"moved, but the old copy could not be removed ({exc.strerror})")
    return item


def _entries(directory: Path, suffixes: tuple[str, ...]) -> list[str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(suffixes) and not n.startswith("."))


def _plan_lane(legacy: Path, lane: Lane) -> list[MoveItem]:
    items = [_classify(str(legacy / LEGACY_RECORDS / n), str(lane.records / n))
             for n in _entries(legacy / LEGACY_RECORDS, (".md",))]
    staged = _entries(legacy / LEGACY_STAGING, (RAW_SUFFIX, SIDECAR_SUFFIX))
    # Sidecars first: a moved .raw must never be seen without its lineage.
    staged.sort(key=lambda n: (not n.endswith(SIDECAR_SUFFIX), n))
    items += [_classify(str(legacy / LEGACY_STAGING / n), str(lane.staging / n)) for n in staged]
    return items


def _tombstone(legacy: Path, lane: Lane, now_ns: int) -> None:
    where = str(lane.records)
    home = os.path.expanduser("~").rstrip("/")
    if home and (where == home or where.startswith(home + "/")):
        where = "~" + where[len(home):]
    body = (f"The transcript corpus for this repo lives at:\n{where}\n"
            f"Moved {format_rfc3339_ns(now_ns)} by abcd history migrate.\n")
    atomic_write(legacy / TOMBSTONE, body.encode("utf-8"))


def _legacy_dirs(history: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(history))
    except OSError:
        return []
    return [history / n for n in names
            if ROOT_SHA_RE.fullmatch(n) and stat.S_ISDIR(os.lstat(history / n).st_mode)]


def migrate(home: Home, *, apply: bool, config: Config, now_ns: int) -> MigrateReport:
    """Report (and with ``apply``, carry out) the migration of every legacy lane.

    Raises :class:`~abcd_daemon.errors.StorePathError` (a symlink on the lane's chain) or
    :class:`~abcd_daemon.errors.LockContention`; a file that cannot be moved is left
    and reported, never an exception.
    """
    history = home.root / LEGACY_HISTORY
    report = MigrateReport(apply=apply, history_dir=str(history))
    for legacy in _legacy_dirs(history):
        lane = Lane(home, legacy.name)
        result = LaneMigration(root_sha=lane.root_sha, legacy_dir=str(legacy))
        report.lanes.append(result)
        if os.path.lexists(legacy / TOMBSTONE):
            result.already_moved = True
            continue
        items = _plan_lane(legacy, lane)
        if not items and not any(os.path.isdir(legacy / d) for d in (LEGACY_RECORDS, LEGACY_STAGING)):
            report.lanes.pop()  # a registry entry with no corpus: nothing to say
            continue
        result.records = sum(1 for i in items if i.dest.startswith(str(lane.records)))
        result.staged = len(items) - result.records
        if not apply:
            result.items = items
            result.left = [i for i in items if i.action not in ("move", "duplicate")]
            continue
        lane.ensure(RECORDS, STAGING)
        with file_lock(lane.lock_file, config.lane_lock_timeout_s):
            for item in items:
                done = _apply(item)
                result.items.append(done)
                if done.action == "move":
                    result.moved += 1
                elif done.action == "duplicate":
                    result.duplicates += 1
                else:
                    result.left.append(done)
            if not result.left:
                try:
                    _tombstone(legacy, lane, now_ns)
                    result.tombstoned = True
                except (AbcdError, OSError) as exc:
                    result.left.append(MoveItem(source=str(legacy), dest="", action="failed",
                                                detail=f"everything moved, but the tombstone could not be written ({exc})"))
    return report
