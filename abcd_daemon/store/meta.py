"""Lineage metadata: what a capture or a stage says about a transcript, and its rules.

One definition of the lineage fields (seed 003) and of the invariants between them,
used by capture, staging sidecars and intake alike, so a lineage the store would
refuse never reaches a sidecar.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

from ..errors import InputError
from ..ids import check_id

#: A hook payload's lineage: it outranks what ingest reads from a file.
HOOK = "hook"
LINEAGE_SOURCES = (HOOK, "ingest", "migrated")
ATTRIBUTIONS = ("sidecar", "transcript", "unattributed")
SOURCE_KINDS = ("native", "import")

#: The scalars framed with the body for redaction, in frame order (reference §2 step 7).
FRAMED_SCALARS = (
    "agent_id",
    "parent_agent_id",
    "agent_type",
    "spawn_tool_use_id",
    "lineage_source",
    "spawn_attribution",
    "adopted_project",
)
#: Free-text scalars: anything but a line break (which would forge a frontmatter line).
_FREE_TEXT = ("agent_type", "spawn_tool_use_id", "adopted_project", "source_tool")
_MAX_SCALAR = 512


class Lineage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The lineage fields, defined here once: who spawned a transcript, where, and who
    said so. :class:`CaptureMeta`, the staging sidecar, the record frontmatter and the
    staged listing all inherit them, so a field added here reaches every one of them.
    Empty strings mean "not known" or, for ``agent_id``, "the main thread"."""

    agent_id: str = ""
    parent_agent_id: str = ""
    agent_type: str = ""
    spawn_depth: int = 0
    spawn_tool_use_id: str = ""
    lineage_source: str = ""
    spawn_attribution: str = ""
    adopted_project: str = ""

    @property
    def is_main_thread(self) -> bool:
        return not self.agent_id


#: Every lineage field, in definition order.
LINEAGE_FIELDS = Lineage.__struct_fields__


class CaptureMeta(Lineage, frozen=True, kw_only=True, omit_defaults=True):
    """Who a transcript belongs to: its session, its :class:`Lineage`, and its source."""

    session_id: str
    source_kind: str = "native"
    source_tool: str = ""

    def validate(self) -> "CaptureMeta":
        """Return self if every rule holds; else raise :class:`InputError` naming the field.

        Rules: ids are safe ids; depth ≥ 0; ``lineage_source`` and
        ``spawn_attribution`` from their vocabularies; a main thread has no
        attribution; a sub-agent must have one; ``unattributed`` carries no parent,
        depth or tool call; free-text scalars carry no line break and are bounded.
        """
        check_id(self.session_id, "session_id")
        if self.agent_id:
            check_id(self.agent_id, "agent_id")
        if self.parent_agent_id:
            check_id(self.parent_agent_id, "parent_agent_id")
        if self.spawn_depth < 0:
            raise InputError(f"spawn_depth must be >= 0, not {self.spawn_depth}")
        if self.lineage_source and self.lineage_source not in LINEAGE_SOURCES:
            raise InputError(
                f"lineage_source {self.lineage_source!r} is not one of {', '.join(LINEAGE_SOURCES)}"
            )
        if self.source_kind not in SOURCE_KINDS:
            raise InputError(f"source_kind {self.source_kind!r} is not one of native, import")
        for name in _FREE_TEXT:
            value = getattr(self, name)
            if "\n" in value or "\r" in value:
                raise InputError(
                    f"{name} carries a line break, which would forge a frontmatter line; refused"
                )
            if len(value) > _MAX_SCALAR:
                raise InputError(f"{name} is longer than {_MAX_SCALAR} characters; refused")
        if not self.agent_id:
            if self.spawn_attribution:
                raise InputError("a main-thread transcript carries no spawn_attribution")
        else:
            if self.spawn_attribution not in ATTRIBUTIONS:
                raise InputError(
                    "a sub-agent transcript needs spawn_attribution "
                    f"({', '.join(ATTRIBUTIONS)}), not {self.spawn_attribution!r}"
                )
            if self.spawn_attribution == "unattributed" and (
                self.parent_agent_id or self.spawn_depth or self.spawn_tool_use_id
            ):
                raise InputError(
                    "an unattributed sub-agent carries no parent, depth or spawning tool call"
                )
        return self
