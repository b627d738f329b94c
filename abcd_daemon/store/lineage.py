"""Which lineage wins when two sources describe one transcript (pure).

A hook payload's lineage (``lineage_source: hook``) outranks what ingest or the watcher
reads from the files (DESIGN §3.2 step 4, seed 003): SubagentStop names the agent's
type, the files only say ``general-purpose``. Both sources see the same transcript, in
either order — the watcher or a SessionStart catch-up can stage (and the drain store) a
sub-agent's file before its SubagentStop payload is taken, and a file stage can be
planned from a view of the store taken before the payload's stage landed. So the rule
is applied where the store commits, under its locks, not only where ingest plans:

- :func:`prefer_hook` — a stage or capture from the files keeps the lineage a hook
  already gave the same (session, agent);
- :func:`upgrades` — a hook's capture of bytes already stored from the files is not
  "already stored": it replaces that record, so the payload's lineage is what is kept.

Lineage belongs to the (session, agent), not to one version of its bytes: a longer
re-arrival keeps it too.
"""

from __future__ import annotations

import msgspec

from ..errors import InputError
from .meta import HOOK, CaptureMeta
from .record import Record

#: The fields a hook's lineage carries over to a stage or capture from the files.
LINEAGE_FIELDS = ("parent_agent_id", "agent_type", "spawn_depth", "spawn_tool_use_id",
                  "lineage_source", "spawn_attribution")


def record_lineage(record: Record) -> CaptureMeta:
    """The lineage a record was captured with, as a :class:`CaptureMeta` (its fields
    are named as CaptureMeta's). Not validated: a redacted id may no longer be one."""
    return CaptureMeta(**{f: getattr(record, f) for f in CaptureMeta.__struct_fields__})


def prefer_hook(meta: CaptureMeta, hook: CaptureMeta | None) -> CaptureMeta:
    """``meta`` with the lineage of ``hook`` when ``meta`` is not a hook's and ``hook``
    is a hook's lineage of the same (session, agent) that still validates; otherwise
    ``meta`` unchanged. Never raises."""
    if (hook is None or meta.lineage_source == HOOK or hook.lineage_source != HOOK
            or (hook.session_id, hook.agent_id) != (meta.session_id, meta.agent_id)):
        return meta
    merged = msgspec.structs.replace(meta, **{f: getattr(hook, f) for f in LINEAGE_FIELDS})
    try:
        return merged.validate()
    except InputError:  # redaction masked an id of the stored record: keep the file's
        return meta


def hook_record(records: list[Record], meta: CaptureMeta) -> CaptureMeta | None:
    """The lineage of the newest record of ``meta``'s (session, agent, kind) captured
    from a hook payload, or None."""
    hooks = [r for r in records
             if (r.session_id, r.agent_id, r.source_kind) == (meta.session_id, meta.agent_id,
                                                               meta.source_kind)
             and r.lineage_source == HOOK]
    if not hooks:
        return None
    return record_lineage(max(hooks, key=lambda r: (r.captured_ns, r.name)))


def upgrades(meta: CaptureMeta, record: Record) -> bool:
    """True when capturing ``meta`` over ``record`` (same unit, same bytes) must write a
    new record: the hook's lineage replaces one read from the files."""
    return meta.lineage_source == HOOK and record.lineage_source != HOOK
