"""Recognising transcripts on disk by their path: both Claude Code layouts and the JSONL
store harness's (seed 004). Nothing here reads a file's content.

Path rules (relative to a root; the same for Claude Code and the JSONL store harness)::

    <dir>/<session>.jsonl                                        main thread
    <dir>/<session>/subagents/agent-<agent>.jsonl                sub-agent of <session>
    <dir>/<session>/subagents/workflows/<run>/agent-<agent>.jsonl   workflow sub-agent
    <dir>/agent-<agent>.jsonl                                    older Claude Code sub-agent
                                                                 (its session is named by
                                                                 its lines, not its path)

Any other ``.jsonl`` inside a ``subagents`` folder (a workflow ``journal.jsonl``) is not a
transcript. Files not ending in ``.jsonl`` (``agent-<id>.meta.json``, tool results) are
not considered at all.

Walk rules: directories at most :data:`MAX_DEPTH` levels below a root are descended;
symlinks — to files or directories — are never followed, and each is reported; ``.git``
is not descended; a non-regular file named like a transcript is reported. A root named
by the caller is taken as given (it may itself be a symlink: the user chose it).
"""

from __future__ import annotations

import os
import stat
from typing import Iterable, NamedTuple

import msgspec

from ..ids import is_valid_id
from .report import Listed

#: How many directory levels below a root are descended (reference §5.6).
MAX_DEPTH = 8
SUFFIX = ".jsonl"
AGENT_PREFIX = "agent-"
_SKIP_DIRS = frozenset({".git"})


class Shape(NamedTuple):
    """What a path says: ``kind`` main|subagent; ``layout`` main|subagents|workflow|
    legacy-agent; ids as named by the path ("" where the path does not name them)."""

    kind: str
    layout: str
    session_id: str
    agent_id: str


class Found(msgspec.Struct, frozen=True, kw_only=True):
    """A file whose path is a transcript's. ``session_id`` is "" for the older
    sub-agent layout (read from its lines later)."""

    path: str
    kind: str
    layout: str
    session_id: str
    agent_id: str
    size: int
    mtime_ns: int

    @property
    def is_main(self) -> bool:
        return self.kind == "main"


def recognise(parts: tuple[str, ...]) -> Shape | tuple[str, str] | None:
    """Classify a path given as its components below a root.

    Returns a :class:`Shape`; ``(reason, detail)`` (``not-a-transcript`` or ``bad-id``)
    for a ``.jsonl`` that is not a usable transcript; ``None`` for a file that is not a
    ``.jsonl`` at all.
    """
    name = parts[-1]
    if not name.endswith(SUFFIX) or name.startswith("."):
        return None
    stem = name[: -len(SUFFIX)]
    dirs = parts[:-1]
    shape: Shape | None = None
    if "subagents" in dirs:
        if len(dirs) >= 2 and dirs[-1] == "subagents" and stem.startswith(AGENT_PREFIX):
            shape = Shape("subagent", "subagents", dirs[-2], stem[len(AGENT_PREFIX):])
        elif (len(dirs) >= 4 and dirs[-3] == "subagents" and dirs[-2] == "workflows"
              and stem.startswith(AGENT_PREFIX)):
            shape = Shape("subagent", "workflow", dirs[-4], stem[len(AGENT_PREFIX):])
        else:
            return ("not-a-transcript", "a file in a subagents folder that is not "
                    "agent-<id>.jsonl (a workflow journal or another harness file)")
    elif stem.startswith(AGENT_PREFIX):
        shape = Shape("subagent", "legacy-agent", "", stem[len(AGENT_PREFIX):])
    else:
        shape = Shape("main", "main", stem, "")
    if shape.session_id and not is_valid_id(shape.session_id):
        return "bad-id", f"session id {shape.session_id[:80]!r} is not a usable id"
    if shape.kind == "subagent" and not is_valid_id(shape.agent_id):
        return "bad-id", f"agent id {shape.agent_id[:80]!r} is not a usable id"
    return shape


def main_path(found: Found, session_id: str) -> str:
    """Where ``session_id``'s main thread lives for a transcript found at ``found.path``
    (for a main thread: itself)."""
    if found.is_main:
        return found.path
    here = os.path.dirname(found.path)
    if found.layout == "subagents":  # <dir>/<session>/subagents/agent-x.jsonl
        base = os.path.dirname(os.path.dirname(here))
    elif found.layout == "workflow":  # <dir>/<session>/subagents/workflows/<run>/agent-x.jsonl
        base = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    else:  # legacy: beside the main thread
        base = here
    return os.path.join(base, session_id + SUFFIX)


def classify_file(root: str | None, path: str, st: os.stat_result) -> Found | Listed | None:
    """Classify one file given its ``lstat``, judging depth from ``root`` (no depth
    limit without one). ``None`` when it is not a ``.jsonl``."""
    parts = tuple((os.path.relpath(path, root) if root else path).split(os.sep))
    if not parts[-1].endswith(SUFFIX):
        return None
    if stat.S_ISLNK(st.st_mode):
        return Listed(path=path, reason="symlink", detail="a symlinked transcript is never followed")
    if not stat.S_ISREG(st.st_mode):
        return Listed(path=path, reason="not-regular",
                      detail="not a regular file (a FIFO, device or socket)")
    if root and len(parts) - 1 > MAX_DEPTH:
        return Listed(path=path, reason="too-deep",
                      detail=f"more than {MAX_DEPTH} directories below the root")
    shape = recognise(parts)
    if shape is None:
        return None
    if not isinstance(shape, Shape):
        return Listed(path=path, reason=shape[0], detail=shape[1])
    return Found(path=path, kind=shape.kind, layout=shape.layout, session_id=shape.session_id,
                 agent_id=shape.agent_id, size=st.st_size, mtime_ns=st.st_mtime_ns)


class Walk(msgspec.Struct, kw_only=True):
    found: list[Found] = []
    listed: list[Listed] = []


def walk(roots: Iterable[str], *, max_depth: int = MAX_DEPTH) -> Walk:
    """Every transcript-shaped file under ``roots`` (sorted by path), and every refusal.

    Never raises for what it finds: an unreadable directory or a missing root is
    listed. A file found under two roots (nested roots) is reported once.
    """
    out = Walk(found=[], listed=[])
    seen: set[str] = set()
    for root in roots:
        root = os.path.abspath(os.path.expanduser(root))
        if not os.path.isdir(root):
            out.listed.append(Listed(path=root, reason="root-missing",
                                     detail="the root does not exist or is not a directory"))
            continue
        scan(root, root, max_depth=max_depth, out=out, seen=seen)
    out.found.sort(key=lambda f: f.path)
    return out


def scan(root: str, start: str, *, max_depth: int = MAX_DEPTH, out: Walk | None = None,
         seen: set[str] | None = None) -> Walk:
    """Walk the directory ``start`` (``root`` or a directory below it), classifying
    paths relative to ``root``. The watcher rescans one new directory this way."""
    out = out if out is not None else Walk(found=[], listed=[])
    seen = seen if seen is not None else set()
    rel = os.path.relpath(start, root)
    stack: list[tuple[str, int]] = [(start, 0 if rel == "." else len(rel.split(os.sep)))]
    while stack:
        directory, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            out.listed.append(Listed(path=directory, reason="unreadable",
                                     detail=f"directory could not be listed ({exc.strerror})"))
            continue
        for entry in entries:
            path = entry.path
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # vanished while listed
            if stat.S_ISLNK(st.st_mode):
                if path not in seen:
                    seen.add(path)
                    out.listed.append(Listed(path=path, reason="symlink",
                                             detail="a symlink is never followed"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in _SKIP_DIRS:
                    continue
                if depth + 1 > max_depth:
                    out.listed.append(Listed(path=path, reason="too-deep",
                                             detail=f"more than {max_depth} directories below the root"))
                    continue
                stack.append((path, depth + 1))
                continue
            if path in seen:
                continue
            found = classify_file(root, path, st)
            if found is None:
                continue
            seen.add(path)
            if isinstance(found, Found):
                out.found.append(found)
            else:
                out.listed.append(found)
    return out
