"""The harness ledger: what the daemon last did with each harness transcript, so a
catch-up reads again only what changed.

``ABCD_HOME/harness-ledger.json`` maps a transcript's path to the size and mtime it had
when it was last handed to ingest, the digest of the bytes read then, and what ingest
did with it (a :class:`~.report.FileOutcome`). Rules:

- An entry whose size and mtime match the file *covers* it: no catch-up reads it again.
  ``failed`` (a disk fault while staging) never covers; ``unowned`` covers only when the
  caller does not ask to retry (the daemon retries it at start and at SessionStart —
  the repository may exist by then — never on every tick).
- The ledger is a cache, derived and rebuildable. Lost, or unreadable, it starts empty
  and the next catch-up reads every file once more; ingest is idempotent, so what the
  store holds is counted present and nothing is staged twice. It never decides that a
  transcript is stored: records do (``history missing`` checks them).
- ``live`` marks a transcript followed because a hook named it (outside every watched
  root); a restarted daemon keeps following it until :func:`Ledger.unfollow`.
- Thread-safe: catch-ups and settles update it from worker threads. :meth:`save` writes
  the whole file atomically, only when something changed.
"""

from __future__ import annotations

import logging
import threading

import msgspec

from ..errors import UNDECODABLE, AbcdError
from ..fsio.atomic import atomic_write
from ..fsio.dirs import ensure_chain
from ..fsio.guarded import read_guarded
from ..paths import Home
from .report import FAILED, UNOWNED, FileOutcome, Verdict

log = logging.getLogger("abcd.daemon.follow")

SCHEMA = 1
#: The ledger of a store with tens of thousands of transcripts stays well under this.
LEDGER_CAP = 256 << 20


class Seen(Verdict, kw_only=True):
    """One transcript as last handed over: its (size, mtime) then, and the verdict."""

    size: int
    mtime_ns: int
    live: bool = False

    @property
    def sig(self) -> tuple[int, int]:
        return self.size, self.mtime_ns


class _File(msgspec.Struct, kw_only=True):
    schema: int = SCHEMA
    files: dict[str, Seen] = {}


class Ledger:
    """The ledger of one home. Build with :meth:`load`."""

    def __init__(self, home: Home, files: dict[str, Seen] | None = None) -> None:
        self.home = home
        self._files = files or {}
        self._lock = threading.Lock()
        self._dirty = False

    @classmethod
    def load(cls, home: Home) -> "Ledger":
        """Read the ledger; an absent or unusable one is empty (and said so in the log)."""
        try:
            data = read_guarded(home.harness_ledger, LEDGER_CAP, what="harness ledger")
            parsed = msgspec.json.decode(data, type=_File)
        except AbcdError as exc:
            if getattr(exc, "reason", "") != "missing":
                log.warning("%s; starting a fresh ledger (the next catch-up reads every "
                            "harness transcript once)", exc)
            return cls(home)
        except UNDECODABLE as exc:
            log.warning("the harness ledger does not parse (%s); starting a fresh one", exc)
            return cls(home)
        if parsed.schema != SCHEMA:
            log.warning("the harness ledger has schema %s; starting a fresh one", parsed.schema)
            return cls(home)
        return cls(home, parsed.files)

    def get(self, path: str) -> Seen | None:
        with self._lock:
            return self._files.get(path)

    def covers(self, path: str, size: int, mtime_ns: int, *, retry_unowned: bool = False) -> bool:
        """True when ``path`` was handed over with this size and mtime and needs nothing
        more (see the module rules)."""
        seen = self.get(path)
        if seen is None or seen.sig != (size, mtime_ns) or seen.outcome in ("", FAILED):
            return False
        return not (retry_unowned and seen.outcome == UNOWNED)

    def handled_sig(self, path: str) -> tuple[int, int] | None:
        """The (size, mtime) ``path`` was last handed over in, or None."""
        seen = self.get(path)
        return seen.sig if seen is not None and seen.outcome not in ("", FAILED) else None

    def record(self, path: str, size: int, mtime_ns: int, outcome: FileOutcome | None) -> None:
        """``path`` (found with this size and mtime) was handed to ingest; ``outcome`` is
        what ingest did (None: the file vanished before it was read)."""
        with self._lock:
            old = self._files.get(path)
            live = old.live if old is not None else False
            if outcome is None:
                if old is not None and not live:
                    del self._files[path]
                    self._dirty = True
                return
            seen = Seen(size=size, mtime_ns=mtime_ns, live=live, **outcome.verdict())
            seen.detail = seen.detail[:500]
            self._files[path] = seen
            self._dirty = True

    def follow(self, path: str) -> bool:
        """Mark ``path`` followed (a hook named it). True when it was not already."""
        with self._lock:
            seen = self._files.get(path)
            if seen is not None and seen.live:
                return False
            if seen is None:
                seen = self._files[path] = Seen(size=-1, mtime_ns=0)
            seen.live = True
            self._dirty = True
            return True

    def unfollow(self, path: str) -> None:
        with self._lock:
            seen = self._files.get(path)
            if seen is not None and seen.live:
                seen.live = False
                if seen.size < 0:
                    del self._files[path]
                self._dirty = True

    def followed(self) -> list[str]:
        with self._lock:
            return sorted(p for p, s in self._files.items() if s.live)

    def forget(self, path: str) -> None:
        """The file is gone (deleted by the harness's retention, or moved)."""
        with self._lock:
            if self._files.pop(path, None) is not None:
                self._dirty = True

    def paths(self) -> list[str]:
        with self._lock:
            return sorted(self._files)

    def save(self) -> bool:
        """Write the ledger if it changed. True when written; a write failure is logged
        (the ledger is a cache: the next catch-up reads again what it forgot)."""
        with self._lock:
            if not self._dirty:
                return False
            data = msgspec.json.encode(_File(files=dict(self._files)))
            self._dirty = False
        try:
            ensure_chain(self.home.root)
            atomic_write(self.home.harness_ledger, data)
        except (OSError, AbcdError) as exc:
            log.warning("could not write %s (%s); the next catch-up re-reads what changed",
                        self.home.harness_ledger, exc)
            with self._lock:
                self._dirty = True
            return False
        return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._files)
