"""Session notes and the sub-agent payload-gap marker.

Session notes (reference §5.2): ``<lane>/sessions/<session-id>``, zero bytes, 0o600,
"the filename is the content". Written whenever a session's cwd resolves; pruned past
the TTL (by mtime) whenever one is written. A later payload holding only a session id
(its worktree already removed) finds its lane with one ``stat`` per lane and no
transcript read. A session two lanes claim is refused, never guessed: filing under the
wrong repository would redact with the wrong repository's identity.

Gap marker (reference §5.3): ``<lane>/subagent-payload-gap.json`` records the first and
last sighting and a count of SubagentStop payloads with no ``agent_transcript_path``.
"""

from __future__ import annotations

import os
import stat

import msgspec

from ..errors import UNDECODABLE, AbcdError, NotFoundError
from ..fsio.atomic import atomic_write
from ..fsio.guarded import read_guarded
from ..ids import check_id
from ..limits import SIDECAR_CAP
from ..paths import SESSIONS, Home
from ..store.lane import Lane, list_lanes
from ..store.record import format_rfc3339_ns
from .gap import GapMarker


class AmbiguousSession(AbcdError):
    """Two or more lanes claim one session."""


def note_session(lane: Lane, session_id: str, *, now_ns: int, ttl_s: float) -> None:
    """Write (or refresh) the note for ``session_id`` and prune stale notes."""
    check_id(session_id, "session_id")
    lane.ensure(SESSIONS)
    cutoff = now_ns - int(ttl_s * 1e9)
    for name in os.listdir(lane.sessions):
        path = lane.sessions / name
        try:
            if os.lstat(path).st_mtime_ns < cutoff and name != session_id:
                os.unlink(path)
        except OSError:
            pass
    path = lane.sessions / session_id
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.utime(fd, ns=(now_ns, now_ns))
    finally:
        os.close(fd)


def session_lane(home: Home, session_id: str) -> Lane:
    """The one lane whose notes name ``session_id``. Raises NotFoundError (none) or
    AmbiguousSession (two or more). A directory or symlink in the note's place does
    not count."""
    check_id(session_id, "session_id")
    claims = []
    for lane in list_lanes(home):
        try:
            st = os.lstat(lane.path / SESSIONS / session_id)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            claims.append(lane)
    if not claims:
        raise NotFoundError(f"no store has seen session {session_id}")
    if len(claims) > 1:
        raise AmbiguousSession(
            f"session {session_id} is claimed by {len(claims)} stores; refusing to guess "
            "which repository owns its transcripts"
        )
    return claims[0]


def read_gap(lane: Lane) -> GapMarker | None:
    """The lane's gap marker, or None when absent or unreadable."""
    try:
        return msgspec.json.decode(read_guarded(lane.gap_marker, SIDECAR_CAP), type=GapMarker)
    except (AbcdError, *UNDECODABLE):
        return None


def note_gap(lane: Lane, event: str, *, now_ns: int) -> GapMarker:
    """Record one more payload without a transcript path; returns the new marker."""
    lane.ensure()
    marker = read_gap(lane) or GapMarker(first_seen=format_rfc3339_ns(now_ns))
    marker.last_seen = format_rfc3339_ns(now_ns)
    marker.count += 1
    marker.event = event[:64]
    atomic_write(lane.gap_marker, msgspec.json.encode(marker) + b"\n")
    return marker
