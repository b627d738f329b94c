"""Rendering one thread's turns: headings, blocks, spawn/join markers, spine, the cap.

Rules (reference §6.4; DESIGN §5 invariant 7):
- Turn heading ``### Turn <n> — <role>`` then `` · <model>`` and `` · <time>`` when known;
  a compaction summary and (in the main thread) a sidechain line say so after the role.
- Every block is rendered by :func:`~.render_blocks.render_block` (the fenced writer,
  the per-block cap and its elision line: the rules are there); labels outside fences
  go through :func:`~.fence.label`/:func:`~.fence.code`. A lean transcript read for the
  artefact has its blocks already rendered (:mod:`.render_spill`): its turns' pieces
  are copied in, with what the cap elided from them — the same bytes, the same counts.
- Spine mode reduces a delegate (never the main thread) to its first and last turn with
  one counted gap marker; markers of omitted turns are omitted with them.
- Markers follow the turn they belong to: SPAWNED after the turn that issued the call,
  JOINED after the turn the result reached (naming the time of the line that carried
  it); a spawn and join on one turn collapse. A spawn whose transcript is not stored
  gets its own ``[SPAWNED — transcript not stored]`` marker, never a ``[SPAWNED**`` one.
  A ``[COMPACTED]`` marker names the compaction agent that wrote its summary, when one
  is linked.

Pure; appends ``str`` pieces to a list the caller joins, or to a
:class:`~.spill.Spill` (which takes a rendered spill's bytes as they are).
"""

from __future__ import annotations

from .fence import code, label
from .model import Block, Transcript, Turn
from .refill import with_text
from .render_blocks import render_block
from .render_spill import RenderSpill, write_turns
from .values import when_label

COMPACTION_MARKER = (
    "> **[COMPACTED]** the model's context was compacted here; what came before reached "
    "the model from here on only as a summary.\n\n")


def compaction_marker(agent_id: str) -> str:
    """The ``[COMPACTED]`` marker; naming the compaction agent's section when linked."""
    if not agent_id:
        return COMPACTION_MARKER
    return ("> **[COMPACTED]** the model's context was compacted here; what came before "
            "reached the model from here on only as a summary, written by the compaction "
            f"agent {code(agent_id)} — its transcript is in section \"Agent "
            f"{code(agent_id)}\".\n\n")


def spawned_marker(agent_id: str, agent_type: str) -> str:
    kind = label(agent_type) if agent_type else "—"
    return (f"> **[SPAWNED** agent {code(agent_id)} ({kind}) here — its transcript is in "
            f"section \"Agent {code(agent_id)}\". Everything below this line up to its "
            f"JOIN marker ran without its result. **]**\n\n")


def not_stored_marker(agent_id: str, agent_type: str) -> str:
    """A spawn whose transcript is not stored (never a ``[SPAWNED**`` marker: there is
    no section it could point to)."""
    who = f"agent {code(agent_id)}" if agent_id else "an agent whose id no line names"
    kind = label(agent_type) if agent_type else "—"
    return (f"> **[SPAWNED — transcript not stored]** {who} ({kind}) was spawned here; "
            "its transcript is not in the store, so nothing of it is rendered.\n\n")


def joined_marker(agent_id: str, synchronous: bool, when: str = "") -> str:
    at = f", in the line stamped {when_label(when)}" if when else ""
    if synchronous:
        return (f"> **[JOINED** agent {code(agent_id)} here — spawned and joined in the "
                f"same turn (synchronous){at}. **]**\n\n")
    return (f"> **[JOINED** agent {code(agent_id)} here — its result reached this thread "
            f"at this turn{at}. **]**\n\n")


def spine_gap(omitted: int) -> str:
    return f"> … {omitted} turn(s) omitted in spine mode …\n\n"


class TurnWriter:
    """Renders threads into ``parts`` and counts what the artefact left out."""

    def __init__(self, parts: list[str], *, max_block_bytes: int, spine: bool) -> None:
        self.parts = parts
        append_bytes = getattr(parts, "append_bytes", None)  # a :class:`~.spill.Spill`
        self._bytes = append_bytes or (lambda data: parts.append(str(data, "utf-8")))
        self.cap = max_block_bytes
        self.spine = spine
        self.elided_blocks = 0
        self.elided_bytes = 0
        self.omitted_turns = 0
        self._copies_visible = True
        self._compactions: dict[int, str] = {}

    def thread(self, transcript: Transcript, markers: dict[int, list[str]], *,
               delegate: bool, compactions: dict[int, str] | None = None) -> None:
        """Render every turn of ``transcript`` (spine-reduced when it is a delegate);
        ``markers`` the marker lines after each turn, ``compactions`` the compaction
        agent each ``[COMPACTED]`` marker names."""
        self._copies_visible = not delegate  # every line of a delegate is a sidechain
        self._compactions = compactions or {}
        turns = transcript.turns
        source = transcript.source
        if isinstance(source, RenderSpill):  # its blocks are already Markdown
            self._rendered(turns, source, markers, delegate)
            return
        if self.spine and delegate and len(turns) > 2:
            omitted = len(turns) - 2
            self.omitted_turns += omitted
            ends = with_text(transcript, [turns[0], turns[-1]], self.cap)
            self._turn(next(ends), markers)  # written before the next is asked for
            self.parts.append(spine_gap(omitted))
            self._turn(next(ends), markers)
            ends.close()
            return
        for turn in with_text(transcript, turns, self.cap):
            self._turn(turn, markers)

    def _rendered(self, table, spill: RenderSpill, markers: dict[int, list[str]],
                  delegate: bool) -> None:
        """:meth:`thread` for a lean transcript whose blocks were rendered as they were
        read (:func:`~.render_spill.write_turns`)."""
        if spill.cap != self.cap:
            raise ValueError(f"the blocks were rendered with a cap of {spill.cap} bytes, "
                             f"not {self.cap}")
        n = len(table)
        if self.spine and delegate and n > 2:
            self.omitted_turns += n - 2
            write_turns(self, table, spill, (0,), markers)
            self.parts.append(spine_gap(n - 2))
            write_turns(self, table, spill, (n - 1,), markers)
        else:
            write_turns(self, table, spill, range(n), markers)

    def _turn(self, turn: Turn, markers: dict[int, list[str]]) -> None:
        out = self.parts
        if turn.compacted_before:
            out.append(compaction_marker(self._compactions.get(turn.index, "")))
        role = turn.role
        if turn.compact_summary:
            role += " (compaction summary)"
        if turn.sidechain and self._copies_visible:
            role += " (sidechain)"
        heading = f"### Turn {turn.index} — {role}"
        if turn.model:
            heading += f" · {label(turn.model)}"
        if turn.when:
            heading += f" · {when_label(turn.when)}"
        out.append(heading + "\n\n")
        for block in turn.blocks:
            self._block(block)
        out.extend(markers.get(turn.index, ()))

    def _block(self, block: Block) -> None:
        elided = render_block(self.parts, block, self.cap)
        if elided:
            self.elided_blocks += 1
            self.elided_bytes += elided
