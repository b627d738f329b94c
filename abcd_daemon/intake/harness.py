"""Judging what the harness left on disk: is a transcript settled, is it JSONL, and
its lineage sidecar.

Both are read only if they are regular files owned by this uid: a payload naming
another user's file never brings it into this user's corpus.

Settling (DESIGN §3.2 step 3): SubagentStop can fire before the transcript's last line
is flushed. A transcript is settled when its last non-blank line is complete JSON
(:func:`transcript_settled`); intake's streamed copy (:mod:`.copy`) polls an unsettled
one until it settles or the timeout passes, then stages it anyway, flagged (the drain
re-reads a longer source later and counts it as ``extended``).

Lineage sidecar (step 4): ``agent-<id>.meta.json`` beside the transcript, derived by
substituting the extension — never by walking a directory. Absent or unreadable (owned
by another uid included: it could forge lineage) means empty fields, never an error.
Claude Code's sidecars carry ``agentType`` (and a description); ``spawn_attribution`` is ``sidecar`` only when one also carries a spawn
depth (``spawnDepth`` > 0, with ``parentAgentId``/``toolUseId``), else ``unattributed``.
"""

from __future__ import annotations

import os

import msgspec

from ..errors import UNDECODABLE, AbcdError, InputError
from ..fsio.guarded import read_guarded
from ..ids import is_valid_id
from ..limits import SIDECAR_CAP


def transcript_settled(raw: bytes) -> bool:
    """True when the last non-blank line of ``raw`` is complete JSON."""
    body = raw.rstrip(b" \t\r\n")
    if not body:
        return False
    last = body.rsplit(b"\n", 1)[-1]
    try:
        msgspec.json.decode(last)
    except msgspec.DecodeError:
        return False
    except RecursionError:
        return True  # complete as far as anyone can tell; the drain re-reads it anyway
    return True


def has_json_object_line(raw: bytes, *, probe: int = 1000) -> bool:
    """True when one of the first ``probe`` non-blank lines of ``raw`` is a JSON object —
    the least a JSONL transcript of any harness has. Guards intake against a payload
    naming an arbitrary file (``/etc/shadow``) as its transcript."""
    seen = 0
    for line in raw.split(b"\n"):
        line = line.strip()
        if not line:
            continue
        if line[:1] == b"{":
            try:
                if isinstance(msgspec.json.decode(line), dict):
                    return True
            except (msgspec.DecodeError, RecursionError):
                pass
        seen += 1
        if seen >= probe:
            return False
    return False


def require_jsonl(raw: bytes, name: str) -> bytes:
    """Return ``raw`` if :func:`has_json_object_line` holds, else raise InputError naming
    ``name``: the one refusal of a file that is no transcript, for intake and for
    ``abcd history capture`` alike."""
    if not has_json_object_line(raw):
        raise InputError(f"{name} is not a JSONL transcript (none of its lines is a JSON "
                         "object); nothing was stored",
                         hint="give the .jsonl file the harness wrote")
    return raw


class HarnessLineage(msgspec.Struct, kw_only=True):
    agent_type: str = ""
    parent_agent_id: str = ""
    spawn_depth: int = 0
    spawn_tool_use_id: str = ""
    attribution: str = "unattributed"
    found: bool = False


def meta_path(transcript_path: str) -> str:
    """``…/agent-x.jsonl`` → ``…/agent-x.meta.json``; "" when the name is not ``.jsonl``."""
    return transcript_path[: -len(".jsonl")] + ".meta.json" if transcript_path.endswith(".jsonl") else ""


def _clean(value) -> str:
    if not isinstance(value, str) or "\n" in value or "\r" in value or len(value) > 512:
        return ""
    return value


def read_lineage(transcript_path: str) -> HarnessLineage:
    """The harness's lineage for a sub-agent transcript. Never raises."""
    path = meta_path(transcript_path)
    if not path:
        return HarnessLineage()
    try:
        data = msgspec.json.decode(read_guarded(path, SIDECAR_CAP, what="agent meta sidecar",
                                                owner=os.geteuid()))
    except (AbcdError, *UNDECODABLE):
        return HarnessLineage()
    if not isinstance(data, dict):
        return HarnessLineage()
    out = HarnessLineage(agent_type=_clean(data.get("agentType")), found=True)
    depth = data.get("spawnDepth")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0:
        out.spawn_depth = depth
        out.attribution = "sidecar"
        parent = data.get("parentAgentId")
        out.parent_agent_id = parent if is_valid_id(parent) else ""
        out.spawn_tool_use_id = _clean(data.get("toolUseId"))
    return out
