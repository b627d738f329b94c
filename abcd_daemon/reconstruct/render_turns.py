"""Rendering one thread's turns: headings, blocks, spawn/join markers, spine, the cap.

Rules (reference §6.4; DESIGN §5 invariant 7):
- Turn heading ``### Turn <n> — <role>`` then `` · <model>`` and `` · <time>`` when known;
  a compaction summary and (in the main thread) a sidechain line say so after the role.
- Every block goes through the one fenced writer (:func:`~.fence.fence`) — text
  included; labels outside fences go through :func:`~.fence.label`/:func:`~.fence.code`.
  Thinking is rendered, its signature never; images are named, not carried.
- The per-block cap (``max_block_bytes`` > 0) applies to thinking, tool inputs, tool
  results and other-typed blocks — never to plain text. A capped block keeps its first
  N bytes (cut on a character boundary); the line after its fence says how many bytes
  were elided. That line is outside the fence because it is this document speaking.
- Spine mode reduces a delegate (never the main thread) to its first and last turn with
  one counted gap marker; markers of omitted turns are omitted with them.
- Markers follow the turn they belong to: SPAWNED after the turn that issued the call,
  JOINED after the turn the result reached (naming the time of the line that carried
  it); a spawn and join on one turn collapse. A spawn whose transcript is not stored
  gets its own ``[SPAWNED — transcript not stored]`` marker, never a ``[SPAWNED**`` one.
  A ``[COMPACTED]`` marker names the compaction agent that wrote its summary, when one
  is linked.
- A text block of whitespace alone is not rendered (it would be an empty fence).

Pure; appends ``str`` pieces to a list the caller joins.
"""

from __future__ import annotations

import msgspec

from .fence import code, fence, label
from .model import IMAGE, TEXT, THINKING, TOOL_RESULT, TOOL_USE, Block, Transcript, Turn
from .refill import with_text
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


def _pretty(raw: bytes) -> str:
    """A tool input pretty-printed with a 2-space indent (raw text if not JSON)."""
    if raw in (b"", b"{}", b"null"):
        return "{}"
    try:
        return msgspec.json.format(raw, indent=2).decode("utf-8", "replace")
    except (msgspec.DecodeError, ValueError):
        return raw.decode("utf-8", "replace")


class TurnWriter:
    """Renders threads into ``parts`` and counts what the artefact left out."""

    def __init__(self, parts: list[str], *, max_block_bytes: int, spine: bool) -> None:
        self.parts = parts
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

    def _capped(self, text: str, lang: str = "", cut: int = 0) -> None:
        """Append ``text`` fenced, truncated to the cap with an elision line; ``cut``:
        ``text`` is already the cap's cut, that many bytes were left unread
        (:mod:`.block_spill`)."""
        cap = self.cap
        kept = text
        if cut:
            self.elided_blocks += 1
            self.elided_bytes += cut
            self.parts.append(fence(text, lang))
            self.parts.append(f"… [{cut} bytes elided by the per-block cap]\n\n")
            return
        if cap:
            if text.isascii():  # a character is a byte: no encoding needed to measure
                if len(text) > cap:
                    kept = text[:cap]
            elif len(text) > cap // 4:
                data = text.encode("utf-8", "replace")
                if len(data) > cap:
                    kept = data[:cap].decode("utf-8", "ignore")
        if kept is text:
            self.parts.append(fence(text, lang) + "\n")
            return
        elided = (len(text) - len(kept) if text.isascii() else
                  len(text.encode("utf-8", "replace")) - len(kept.encode("utf-8")))
        self.elided_blocks += 1
        self.elided_bytes += elided
        self.parts.append(fence(kept, lang))
        self.parts.append(f"… [{elided} bytes elided by the per-block cap]\n\n")

    def _block(self, block: Block) -> None:
        out = self.parts
        kind = block.kind
        if kind == TEXT:
            if block.text.strip():  # whitespace alone says nothing: no empty fence
                out.append(fence(block.text) + "\n")
        elif kind == TOOL_USE:
            call = f"**tool call** {code(block.name) if block.name else '(unnamed)'}"
            if block.ref:
                call += f" ({code(block.ref)})"
            out.append(call + "\n\n")
            self._capped(_pretty(block.raw), "json")
        elif kind == TOOL_RESULT:
            head = f"**tool result** for {code(block.ref) if block.ref else '(no call id)'}"
            if block.is_error:
                head += " (error)"
            out.append(head + "\n\n")
            self._capped(block.text, cut=block.cut)
        elif kind == THINKING:
            if block.text or block.cut:
                out.append("*thinking:*\n\n")
                self._capped(block.text, cut=block.cut)
        elif kind == IMAGE:
            out.append("*(an image block was here; images are not carried into the "
                       "artefact)*\n\n")
        else:
            out.append(f"*({label(kind)})*\n\n")
            if block.text or block.cut:
                self._capped(block.text, cut=block.cut)
