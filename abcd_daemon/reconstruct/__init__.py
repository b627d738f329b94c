"""Reconstruction: one captured session → one Markdown artefact + one telemetry file.

Public API (served by the daemon, called by the CLI)::

    opts = ReconstructOptions(session_id=..., mode="full"|"spine", max_block_bytes=0)
    r = reconstruct(lane, opts, now_ns=...)                      # loads, then the core
    r = reconstruct_records(root_sha, loaded, opts, now_ns=...)  # the pure core
    r.artefact, r.artefact_name, r.telemetry_name, r.artefact_bytes, r.telemetry
    r.telemetry_json()  # the telemetry file's bytes

Modules, one responsibility each: :mod:`.claude_code` and :mod:`.store_harness` (adapters)
read record bodies through :mod:`.lines` (JSON lines), :mod:`.blocks` (content blocks) and
:mod:`.values` (times, token counts) into the turn model of :mod:`.model` (:mod:`.harness`
picks the adapter); :mod:`.selection` picks one record per agent; :mod:`.placement` finds
spawn and join points and agent types; :mod:`.compaction` links compaction agents to
their ``[COMPACTED]`` marker; :mod:`.spawns` finds spawned agents with no stored
transcript; :mod:`.telemetry` counts; :mod:`.render`, :mod:`.render_head` and
:mod:`.render_turns` write the artefact (phrases from :mod:`.labels`; each block by
:mod:`.render_blocks`) through the one fenced writer of :mod:`.fence`; :mod:`.schema` holds the value types; :mod:`.api` wires
them. A body too large to load is read by :mod:`.lean` (the model without its text,
held in the columns of :mod:`.lean_tables` by :mod:`.lean_model`, each line decoded
once): for reconstruct its blocks are rendered as the line is read and spilled as
Markdown by :mod:`.render_spill`, for the index spilled as blocks by :mod:`.block_spill`
and given back turn by turn by :mod:`.refill`; the artefact is written through
:mod:`.spill` as it is rendered.
"""

import importlib

#: Where each public name is defined. They load on first use (PEP 562), so a client
#: that only decodes a served reconstruction imports :mod:`.schema`, not the core.
_PUBLIC = {
    "reconstruct": "api", "reconstruct_records": "api",
    **{name: "schema" for name in ("AgentTelemetry", "Completeness", "DroppedRecord",
                                   "ReconstructOptions", "Reconstruction", "Telemetry",
                                   "TokenCounts", "TurnCounts", "encode_telemetry")},
}


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AgentTelemetry",
    "Completeness",
    "DroppedRecord",
    "ReconstructOptions",
    "Reconstruction",
    "Telemetry",
    "TokenCounts",
    "TurnCounts",
    "encode_telemetry",
    "reconstruct",
    "reconstruct_records",
]
