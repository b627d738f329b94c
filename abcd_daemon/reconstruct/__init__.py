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
:mod:`.render_turns` write the artefact (phrases from :mod:`.labels`) through the one
fenced writer of :mod:`.fence`; :mod:`.schema` holds the value types; :mod:`.api` wires
them.
"""

from .api import reconstruct, reconstruct_records
from .schema import (AgentTelemetry, Completeness, DroppedRecord, ReconstructOptions,
                     Reconstruction, Telemetry, TokenCounts, TurnCounts, encode_telemetry)

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
