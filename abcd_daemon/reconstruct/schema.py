"""The public value types of reconstruction: options in, a Reconstruction out.

These are the wire types the daemon serves and the CLI prints, defined once. Field
names and order are the telemetry file's schema (reference §6.5, schema_version 1); a
field with a default is optional and omitted when it holds that default, a field
without one is always written.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

from ..errors import InputError
from ..ids import check_id

SCHEMA_VERSION = 1
MODES = ("full", "spine")


class ReconstructOptions(msgspec.Struct, kw_only=True):
    """What to reconstruct and how. Validated on construction:
    raises :class:`~abcd_daemon.errors.InputError` for a session id that is not a safe
    id, a mode other than ``full``/``spine`` (``""`` means ``full``), or a negative
    ``max_block_bytes`` (0 means unbounded)."""

    session_id: str
    mode: str = "full"
    max_block_bytes: int = 0

    def __post_init__(self) -> None:
        check_id(self.session_id, "session id")
        if self.mode == "":
            self.mode = "full"
        if self.mode not in MODES:
            raise InputError(f'reconstruct mode "{self.mode}" is not one of full, spine')
        if isinstance(self.max_block_bytes, bool) or not isinstance(self.max_block_bytes, int):
            raise InputError("--max-block-bytes must be a whole number of bytes")
        if self.max_block_bytes < 0:
            raise InputError(
                f"--max-block-bytes {self.max_block_bytes} is negative; "
                "give 0 to disable the cap, or a positive number of bytes")


class TokenCounts(msgspec.Struct):
    """Tokens counted once per distinct response; ``total`` is the sum of the four."""

    input: int = 0
    output: int = 0
    cache_creation_input: int = 0
    cache_read_input: int = 0
    total: int = 0
    api_responses: int = 0
    usage_lines_seen: int = 0

    def add(self, other: "TokenCounts") -> None:
        for name in self.__struct_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class TurnCounts(msgspec.Struct):
    user: int = 0
    assistant: int = 0
    total: int = 0


class DroppedRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A record of this session that was not used, and why (by basename only)."""

    record: str
    agent_id: str = ""
    bytes: int
    reason: str


class MissingAgent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A sub-agent a stored thread spawned whose own transcript is not stored.
    ``progress_tokens`` is the usage only its ``agent_progress`` copies carry: stated
    here, never part of the session's totals."""

    agent_id: str = ""
    agent_type: str = ""
    spawned_in: str = ""
    spawned_at_turn: int = 0
    spawn_tool_use_id: str = ""
    progress_tokens: TokenCounts


class AgentTelemetry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One thread's own copy of every measure (the main thread included)."""

    agent_id: str = ""
    is_main_thread: bool
    parent_agent_id: str = ""
    agent_type: str = ""
    agent_type_source: str = ""
    spawn_depth: int
    spawn_attribution: str = ""
    lineage_source: str = ""
    adopted_project: str = ""
    record: str
    harness: str = ""
    started_at: str = ""
    ended_at: str = ""
    wall_clock_seconds: float
    turns: TurnCounts
    tokens: TokenCounts
    tool_calls: dict[str, int]
    models: list[str]
    spawned_in: str = ""
    spawned_at_turn: int = 0
    joined_at_turn: int = 0
    joined_at: str = ""
    spawn_tool_use_id: str = ""
    placed_by: str = ""
    compaction_of: str = ""
    compacted_at_turn: int = 0
    concurrent_with: list[str] = []
    lines: int
    lines_unparseable: int
    lines_unrecognised: int
    usage_without_message_id: int
    responses_without_stop_reason: int
    copied_lines: int


class Completeness(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What this reconstruction knows it does not know."""

    main_thread_present: bool
    #: The main thread holds no transcript lines: its record parses to none, or (with
    #: ``main_thread_present`` false) the harness's main file was seen zero bytes.
    main_thread_empty: bool = False
    records_found: int
    records_used: int
    dropped_records: list[DroppedRecord] = []
    agents_total: int
    agents_unattributed: int
    agents_without_spawn_point: int
    agents_without_join_point: int
    agents_without_agent_type: int
    agents_whose_parent_is_not_in_this_set: int
    compaction_agents: int = 0
    compaction_agents_linked: int = 0
    agents_spawned_not_stored: int = 0
    missing_agents: list[MissingAgent] = []
    lines_unparseable: int
    lines_unrecognised: int
    lines_not_utf8: int
    usage_without_message_id: int
    responses_without_stop_reason: int
    copied_lines: int
    absent_fields: list[str] = []
    elided_blocks: int
    elided_bytes: int
    omitted_turns: int
    notes: list[str] = []


class Telemetry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``<session>.telemetry.json``. Token and turn counts describe the whole
    transcript (computed before elision); ``elided_*``/``omitted_turns`` describe the
    artefact."""

    schema_version: int
    session_id: str
    root_commit: str
    mode: str
    generated_at: str
    started_at: str = ""
    ended_at: str = ""
    wall_clock_seconds: float
    turns: TurnCounts
    tokens: TokenCounts
    tool_calls: dict[str, int]
    models: list[str]
    agent_types: list[str]
    agents: list[AgentTelemetry]
    completeness: Completeness


_ENCODER = msgspec.json.Encoder(order="deterministic")


class Reconstruction(msgspec.Struct, kw_only=True):
    """The result: the artefact's bytes, both file names, its size and the telemetry.
    ``artefact`` never goes into a JSON envelope (see :meth:`envelope`)."""

    artefact: bytes
    artefact_name: str
    telemetry_name: str
    artefact_bytes: int
    telemetry: Telemetry

    def telemetry_json(self) -> bytes:
        """The telemetry file's bytes: JSON, 2-space indent, trailing newline."""
        return encode_telemetry(self.telemetry)

    def envelope(self) -> dict:
        """The Reconstruction as a JSON-able dict, without the artefact."""
        return {
            "artefact_name": self.artefact_name,
            "telemetry_name": self.telemetry_name,
            "artefact_bytes": self.artefact_bytes,
            "telemetry": msgspec.to_builtins(self.telemetry, order="deterministic"),
        }


def encode_telemetry(telemetry: Telemetry) -> bytes:
    """JSON of ``telemetry`` with a 2-space indent and a trailing newline."""
    return msgspec.json.format(_ENCODER.encode(telemetry), indent=2) + b"\n"
