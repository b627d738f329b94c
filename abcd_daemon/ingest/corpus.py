"""What the store already holds, read once per ingest run.

- Records: frontmatter only (``list_records``), keyed (session_id, agent_id,
  source_sha256). A record with the same key is "already present": ingest stages the
  raw harness file, and capture records the sha256 of exactly those bytes.
- Staged entries: sidecars only (``list_staged``); a staged copy's bytes are hashed
  lazily, and only when its (session, agent) and size match a candidate — a staged copy
  with identical bytes is also "already present" (``stage`` would write nothing).
- Which lanes know a session: its note (``sessions/<id>``), a record, or a staged entry.
- The lineage a hook gave each (session, agent), from its staged sidecar or its record:
  a transcript re-staged by ingest or the watcher (it grew after SubagentStop fired)
  keeps what the payload said instead of falling back to what the file says. (This
  view can be stale by the time ingest stages — a payload's stage may land between —
  so staging and capture apply the same rule again under their locks:
  :mod:`abcd_daemon.store.lineage`.)
Every lane is read with the store's own reading functions; nothing here writes.

For one file (the watcher), :meth:`CorpusIndex.load` can be narrowed to a few sessions:
only records whose file name contains one of their ids are read. The name is never
parsed; it is a prefilter whose only possible miss (a record renamed by redaction)
costs a redundant stage that capture then recognises as already stored.
"""

from __future__ import annotations

import os

from ..errors import AbcdError
from ..paths import Home
from ..queue.staged import describe, raw_names
from ..store.lane import Lane, list_lanes
from ..store.lineage import record_lineage
from ..store.meta import HOOK, CaptureMeta
from ..store.record import Record
from ..store.records import list_records, read_header
from .readfile import file_digest

#: A staged copy is abcd's own file, staged under whatever cap was configured then:
#: hashing it has no cap of its own (it is read block by block).
_STAGED_CAP = 1 << 62


def _records(lane: Lane, sessions: frozenset[str] | None) -> list[Record]:
    if sessions is None:
        return list_records(lane)
    try:
        names = os.listdir(lane.records)
    except OSError:
        return []
    out = []
    for name in names:
        if name.endswith(".md") and not name.startswith(".") and any(s in name for s in sessions):
            try:
                out.append(read_header(lane.records / name))
            except (OSError, AbcdError):
                continue
    return out


def _notes(directory) -> list[str]:
    """Session ids noted in a lane: regular files only, as ``session_lane`` counts them."""
    try:
        with os.scandir(directory) as entries:
            return [e.name for e in entries
                    if not e.name.startswith(".") and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


class CorpusIndex:
    """An in-memory view of every lane of one home. Build with :meth:`load`."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str, str], set[str]] = {}
        self._staged: dict[tuple[str, str], list[tuple[str, str, int]]] = {}
        self._sessions: dict[str, set[str]] = {}
        self._digests: dict[str, str] = {}
        self._hook: dict[tuple[str, str], CaptureMeta] = {}
        self.lanes: list[str] = []

    @classmethod
    def load(cls, home: Home, *, now_ns: int, ttl_s: float,
             sessions: frozenset[str] | None = None) -> "CorpusIndex":
        """Read every lane (records narrowed to ``sessions`` when given). Never raises
        for one unreadable entry."""
        index = cls()
        for lane in list_lanes(home):
            sha = lane.root_sha
            index.lanes.append(sha)
            for record in _records(lane, sessions):
                index.add_record(sha, record.session_id, record.agent_id, record.source_sha256)
                if record.lineage_source == HOOK:
                    index.add_hook_lineage(record_lineage(record), replace=False)
            for name in raw_names(lane.staging):
                entry, sidecar = describe(lane, name, now_ns=now_ns, ttl_s=ttl_s)
                if not entry.error:
                    index.add_staged(sha, entry.session_id, entry.agent_id, entry.path, entry.bytes)
                if sidecar is not None and sidecar.lineage_source == HOOK:
                    index.add_hook_lineage(sidecar.meta())
            for name in _notes(lane.sessions):
                index._sessions.setdefault(name, set()).add(sha)
        return index

    def add_record(self, lane: str, session_id: str, agent_id: str, sha256: str) -> None:
        self._records.setdefault((session_id, agent_id, sha256), set()).add(lane)
        self._sessions.setdefault(session_id, set()).add(lane)

    def add_staged(self, lane: str, session_id: str, agent_id: str, path: str, size: int) -> None:
        self._staged.setdefault((session_id, agent_id), []).append((lane, path, size))
        self._sessions.setdefault(session_id, set()).add(lane)

    def recorded(self, session_id: str, agent_id: str, sha256: str,
                 lanes: tuple[str, ...] | None = None) -> str:
        """The lane (first by SHA) holding a record of exactly these bytes for this
        (session, agent), restricted to ``lanes`` when given; "" when none does."""
        held = self._records.get((session_id, agent_id, sha256), set())
        if lanes is not None:
            held = held & set(lanes)
        return min(held) if held else ""

    def staged_identical(self, session_id: str, agent_id: str, size: int, sha256: str,
                         lanes: tuple[str, ...] | None = None) -> str:
        """The lane holding a staged copy of exactly these bytes for this (session,
        agent), or "". Reads (and caches the digest of) a staged file only when its
        size matches."""
        for lane, path, staged_size in self._staged.get((session_id, agent_id), []):
            if staged_size != size or (lanes is not None and lane not in lanes):
                continue
            if self._digest(path) == sha256:
                return lane
        return ""

    def add_hook_lineage(self, meta: CaptureMeta, *, replace: bool = True) -> None:
        """A hook gave this lineage (a staged sidecar replaces a record's)."""
        key = (meta.session_id, meta.agent_id)
        if replace or key not in self._hook:
            self._hook[key] = meta

    def staged_in(self, session_id: str, agent_id: str) -> str:
        """The lane (first by SHA) holding a staged copy of this (session, agent), or ""."""
        lanes = [lane for lane, _, _ in self._staged.get((session_id, agent_id), [])]
        return min(lanes) if lanes else ""

    def hook_lineage(self, session_id: str, agent_id: str) -> CaptureMeta | None:
        """The lineage a hook payload gave this (session, agent), if the store holds one
        (a staged sidecar before a record)."""
        return self._hook.get((session_id, agent_id))

    def lanes_knowing(self, session_id: str) -> tuple[str, ...]:
        """Every lane whose note, record or staged entry names ``session_id``, sorted."""
        return tuple(sorted(self._sessions.get(session_id, ())))

    def _digest(self, path: str) -> str:
        """The sha256 of a staged copy (streamed: staged copies are of any size under
        the configured caps), "" when it cannot be read."""
        if path not in self._digests:
            try:
                self._digests[path] = file_digest(path, cap=_STAGED_CAP)[0]
            except AbcdError:
                self._digests[path] = ""
        return self._digests[path]
