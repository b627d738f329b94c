"""What intake may say about a payload: field names, sizes and kinds — never a value.

A hook payload is unredacted harness text: its ``cwd`` and paths carry the user's home
and name, and any field can carry a secret. Intake's refusal reasons are written to
``spool/failed/<id>.reason``, listed by ``abcd history staged`` and logged to
``daemon.log`` — places a user reads and copies from, outside the owner-only payload —
so (invariant 2) no reason and no log line quotes a payload value.

Two layers:
- the messages intake builds name the field and describe its value
  (:func:`describe`: ``<cwd, 23 characters>``), never quote it;
- :class:`Scrubber`, applied to every message intake produces, replaces any payload
  value that still appears — a lower layer's error that names the path it was given,
  say — by the same description, in its plain, JSON-escaped and ``repr`` forms.
Values shorter than :data:`MIN_SCRUBBED` characters, and the harness's own event
names, are left alone: they cannot hold a secret and would otherwise be "found"
inside ordinary words of the message.
"""

from __future__ import annotations

import msgspec

from ..errors import UNDECODABLE

#: Shorter values are not looked for in messages (no secret is this short).
MIN_SCRUBBED = 6
#: Harness vocabulary abcd's own messages use: never treated as a payload value.
_VOCABULARY = frozenset({"SubagentStop", "SessionEnd", "SessionStart", "subagent-stop",
                         "session-end", "session-start"})
#: A payload nests a few levels; walking stops here (the decoder already refused bombs).
_MAX_DEPTH = 16
#: Fields a description may name (a key is payload text too: any other is "a field").
KNOWN_FIELDS = frozenset({"session_id", "transcript_path", "cwd", "hook_event_name",
                          "agent_id", "agent_type", "agent_transcript_path", "reason",
                          "source", "prompt", "permission_mode", "stop_hook_active",
                          "last_assistant_message"})


def describe(field: str, value: object) -> str:
    """How a message refers to the payload's ``field``: its name and size, no content."""
    if isinstance(value, str):
        return f"<{field}, {len(value)} characters>"
    if value is None:
        return f"<{field}, null>"
    return f"<{field}, a JSON {type(value).__name__}>"


def _walk(value, field: str, out: dict[str, str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        if len(value) >= MIN_SCRUBBED and value not in _VOCABULARY:
            out.setdefault(value, describe(field, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if depth == 0:
                name = key if key in KNOWN_FIELDS else "a payload field"
            else:
                name = field if field.startswith("a value inside") else f"a value inside {field}"
            _walk(item, name, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _walk(item, field if depth else "the payload", out, depth + 1)


class Scrubber:
    """Replaces every payload value in a message by its description."""

    def __init__(self, values: dict[str, str] | None = None) -> None:
        self._forms: list[tuple[str, str]] = []
        for value, description in (values or {}).items():
            self.add(value, description)

    @classmethod
    def of_payload(cls, payload: bytes, extra: dict[str, str] | None = None) -> "Scrubber":
        """A scrubber for the values of ``payload`` (JSON; anything undecodable holds
        no field a message could quote) plus ``extra`` (value → description)."""
        values: dict[str, str] = {}
        try:
            _walk(msgspec.json.decode(payload), "the payload", values, 0)
        except UNDECODABLE:
            pass
        scrubber = cls(values)
        for value, description in (extra or {}).items():
            if len(value) >= MIN_SCRUBBED and value not in _VOCABULARY:
                scrubber.add(value, description)
        return scrubber

    def add(self, value: str, description: str) -> None:
        forms = {value, repr(value)[1:-1], msgspec.json.encode(value).decode()[1:-1]}
        self._forms += [(form, description) for form in forms if form]
        # Longest first: a value that contains another is replaced whole.
        self._forms.sort(key=lambda pair: -len(pair[0]))

    def __call__(self, message: str) -> str:
        for form, description in self._forms:
            if form in message:
                message = message.replace(form, description)
        return message
