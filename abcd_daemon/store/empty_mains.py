"""Empty-main markers: the harness's main transcript was seen, and it was zero bytes.

An empty file is never captured (there is nothing to store or redact), so without a
marker a session whose main file the harness left empty would reconstruct exactly like
one whose main thread was never seen. The marker tells the two apart.

Rules:
- ``<lane>/empty-mains/<session-id>``: zero bytes, 0o600, "the file name is the
  content" (as session notes are); its mtime is when abcd first saw the file empty.
  Writing it again changes nothing (a second ingest leaves the store as it was).
- Written by intake (a SessionEnd whose transcript is empty) and by ingest (an empty
  main file whose session a lane already knows, or whose sub-agents the same run files).
- Never pruned: it is one inode per such session, and the fact does not expire.
- A stored main-thread record outranks the marker (the file grew later); readers check
  records first. A symlink, directory or anything not a regular file in the marker's
  place does not count.
"""

from __future__ import annotations

import os
import stat

from ..errors import AbcdError
from ..ids import check_id
from ..paths import EMPTY_MAINS
from .lane import Lane


def note_empty_main(lane: Lane, session_id: str, *, now_ns: int) -> None:
    """Record that ``session_id``'s main transcript was zero bytes at ``now_ns``; a
    marker already there is left as it is (whatever is in its place: a symlink is never
    followed, and does not count as a marker). Raises InputError (unusable id),
    StorePathError or OSError."""
    check_id(session_id, "session_id")
    lane.ensure(EMPTY_MAINS)
    path = lane.empty_mains / session_id
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return
    try:
        os.utime(fd, ns=(now_ns, now_ns))
        os.fsync(fd)
    finally:
        os.close(fd)


def main_was_empty(lane: Lane, session_id: str) -> bool:
    """Whether a marker says ``session_id``'s main transcript was seen empty."""
    try:
        check_id(session_id, "session_id")
        st = os.lstat(lane.empty_mains / session_id)
    except (OSError, AbcdError):  # no marker, or an id that cannot name one
        return False
    return stat.S_ISREG(st.st_mode)
