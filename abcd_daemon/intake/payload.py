"""A harness hook payload, validated (DESIGN §3.2 step 1, §4).

Fields read: ``session_id transcript_path cwd hook_event_name`` (all events),
``agent_id agent_type agent_transcript_path`` (SubagentStop), ``reason`` (SessionEnd),
``source`` (SessionStart); unknown fields are ignored. Ids must be safe ids (an id is a
file name). A free-text scalar carrying a line break is dropped with a warning — losing
one decorative field beats losing the transcript — and never reaches a frontmatter line.
Messages name fields and describe values (:mod:`.reasons`); they never quote a value.
"""

from __future__ import annotations

import msgspec

from ..errors import InputError
from ..ids import is_valid_id
from ..limits import ID_MAX_LEN
from .reasons import describe


class HookPayload(msgspec.Struct, kw_only=True):
    session_id: str
    cwd: str = ""
    hook_event_name: str = ""
    transcript_path: str = ""
    agent_id: str = ""
    agent_type: str = ""
    agent_transcript_path: str = ""
    warnings: list[str] = []


_SCALARS = ("cwd", "hook_event_name", "transcript_path", "agent_type", "agent_transcript_path")


def parse_payload(data: bytes, *, require_agent: bool = False) -> HookPayload:
    """Decode and validate a payload. Raises InputError saying what is unusable."""
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise InputError(f"the hook payload is not JSON ({exc})") from None
    except RecursionError:
        raise InputError("the hook payload nests deeper than any harness payload") from None
    if not isinstance(raw, dict):
        raise InputError("the hook payload is not a JSON object")
    session_id = raw.get("session_id")
    if session_id is None:
        raise InputError("the payload carries no session_id; staging nothing")
    if not is_valid_id(session_id):
        raise InputError(f"the payload's session_id {describe('session_id', session_id)} is not a "
                         f"usable id: ids are 1-{ID_MAX_LEN} characters of A-Z a-z 0-9 . _ - and "
                         "do not start with '.' (an id becomes a file name)")
    out = HookPayload(session_id=session_id)
    for name in _SCALARS:
        value = raw.get(name, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            out.warnings.append(f"{name} is not a string; ignored")
            continue
        if "\n" in value or "\r" in value or "\0" in value:
            out.warnings.append(f"{name} carries a line break or NUL; dropped")
            continue
        setattr(out, name, value)
    agent_id = raw.get("agent_id", "")
    if agent_id:
        if not is_valid_id(agent_id):
            raise InputError(
                f"the payload carries no usable agent_id ({describe('agent_id', agent_id)}); staging nothing "
                "rather than filing this transcript as the session's own"
            )
        out.agent_id = agent_id
    elif require_agent:
        raise InputError(
            "the SubagentStop payload carries no agent_id; staging nothing rather than filing "
            "this transcript as the session's own"
        )
    return out
