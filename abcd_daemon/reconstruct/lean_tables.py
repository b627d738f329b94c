"""The columns a lean transcript is held in (:mod:`.lean_model` fills them): a few dozen
bytes a turn instead of a :class:`~.model.Turn` and its blocks.

- :class:`TurnTable` is a lean ``Transcript.turns``: per turn its role, key, model, time,
  flags and where its lines' blocks were spilled, in arrays (the rare parts — delivered
  notifications, compaction times, a turn of several lines, tool blocks — in dicts).
  Indexing or iterating it builds a :class:`~.model.Turn` on the fly whose ``blocks``
  are only its tool calls and results, text dropped; :meth:`TurnTable.marked` gives the
  turns placement, spawns and compaction read as lighter :class:`MarkedTurn` values;
  :meth:`TurnTable.keys_and_roles` what telemetry counts, building nothing.
- :class:`ResponseTable` is a lean ``Transcript.responses``: response id → usage, in
  arrays; ``items()``/``get`` build :class:`~.model.Response` values on the fly.

Pure.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

from .model import Block, Response, Turn

WHEN_LEN = 29  # every non-empty time key is this long (YYYY-MM-DDTHH:MM:SS.nnnnnnnnn)
NO_WHEN = b"\0" * WHEN_LEN
SIDECHAIN, SUMMARY, COMPACTED, RESULTS_ONLY = 1, 2, 4, 8
_ZEROS = array("q", (0, 0, 0, 0))


class ResponseTable:
    """Response id → usage, in columns (see the module docstring)."""

    def __init__(self) -> None:
        self.slot: dict[str, int] = {}
        self.usage = array("q")  # 4 per response: input, output, cache creation, read
        self.flags = bytearray()  # 1 has usage, 2 stopped
        self.turn = array("q")  # the turn (0-based) the response opened, -1 until then

    def __len__(self) -> int:
        return len(self.slot)

    def __contains__(self, rid: object) -> bool:
        return rid in self.slot

    def add(self, rid: str, usage, stopped: bool) -> int:
        """One line of response ``rid``: the largest of each figure, the last line's
        stop reason. Returns its slot."""
        slot = self.slot.get(rid)
        if slot is None:  # the first line: its figures are the largest yet (none is < 0)
            slot = self.slot[rid] = len(self.flags)
            if usage is None:
                self.usage += _ZEROS
                self.flags.append(2 if stopped else 0)
            else:
                self.usage.extend(usage)
                self.flags.append(3 if stopped else 1)
            self.turn.append(-1)
            return slot
        flags = (self.flags[slot] & 1) | (2 if stopped else 0)
        if usage is not None:
            flags |= 1
            u, base = self.usage, 4 * slot
            i, o, cc, cr = usage
            if i > u[base]:
                u[base] = i
            if o > u[base + 1]:
                u[base + 1] = o
            if cc > u[base + 2]:
                u[base + 2] = cc
            if cr > u[base + 3]:
                u[base + 3] = cr
        self.flags[slot] = flags
        return slot

    def _response(self, slot: int) -> Response:
        r = Response()
        r.input, r.output, r.cache_creation, r.cache_read = self.usage[4 * slot:4 * slot + 4]
        r.has_usage = bool(self.flags[slot] & 1)
        r.stopped = bool(self.flags[slot] & 2)
        return r

    def get(self, rid: str, default=None):
        slot = self.slot.get(rid)
        return default if slot is None else self._response(slot)

    def items(self):
        for rid, slot in self.slot.items():
            yield rid, self._response(slot)


class MarkedTurn(NamedTuple):
    """What :meth:`TurnTable.marked` gives of a turn: its 1-based ``index``, its tool
    ``blocks`` (text dropped), the notifications it ``notified`` and its compaction
    mark (``compacted_before``, ``compacted_when``) — the fields of a
    :class:`~.model.Turn` those readers use, built for a fraction of its cost."""

    index: int
    blocks: list[Block] | tuple
    notified: list[tuple[str, str]] | tuple
    compacted_before: bool
    compacted_when: str


class TurnTable:
    """A lean transcript's turns, in columns (see the module docstring)."""

    def __init__(self) -> None:
        self.roles: list[str] = []  # the distinct roles, indexed by ``role``
        self.role = bytearray()
        self._role_no: dict[str, int] = {}
        self.key: list[str] = []
        self.models: list[str] = [""]
        self._model_no: dict[str, int] = {"": 0}
        self.model = array("I")
        self.when = bytearray()
        self.flags = bytearray()
        self.spilled = array("q")  # the first line's blocks' piece in the spill (-1: none)
        self.more: dict[int, list[int]] = {}  # further lines' pieces
        self.tools: dict[int, list[Block]] = {}
        self.notified: dict[int, list[tuple[str, str]]] = {}
        self.compacted_when: dict[int, str] = {}
        self._odd_when: dict[int, str] = {}  # a key that is not 29 ASCII characters
        self._marked = None  # (turns when computed, the marked turns' indexes)

    def __len__(self) -> int:
        return len(self.role)

    def __bool__(self) -> bool:
        return len(self.role) > 0

    def new(self, role: str, key: str, flags: int, model: str = "", when: str = "") -> int:
        """Open turn ``len(self)`` (0-based): its role, key and flags, and the model and
        time of its first line ("" when none); returns its index."""
        n = self._role_no.get(role)
        if n is None:
            n = self._role_no[role] = len(self.roles)
            self.roles.append(role)
        i = len(self.role)
        self.role.append(n)
        self.key.append(key)
        if model:
            n = self._model_no.get(model)
            if n is None:
                n = self._model_no[model] = len(self.models)
                self.models.append(model)
            self.model.append(n)
        else:
            self.model.append(0)
        if len(when) == WHEN_LEN and when.isascii():
            self.when += when.encode("ascii")
        else:
            self.when += NO_WHEN
            if when:
                self._odd_when[i] = when
        self.flags.append(flags)
        self.spilled.append(-1)
        return i

    def fill(self, i: int, model: str, when: str) -> None:
        """Give turn ``i`` this line's model and time where it has none yet."""
        if model and not self.model[i]:
            self.set_model(i, model)
        if when and not self.when[WHEN_LEN * i] and i not in self._odd_when:
            self.set_when(i, when)

    def set_model(self, i: int, model: str) -> None:
        n = self._model_no.get(model)
        if n is None:
            n = self._model_no[model] = len(self.models)
            self.models.append(model)
        self.model[i] = n

    def when_of(self, i: int) -> str:
        if i in self._odd_when:
            return self._odd_when[i]
        raw = self.when[WHEN_LEN * i:WHEN_LEN * (i + 1)]
        return "" if raw == NO_WHEN else raw.decode("ascii")

    def set_when(self, i: int, when: str) -> None:
        if len(when) == WHEN_LEN and when.isascii():
            self.when[WHEN_LEN * i:WHEN_LEN * (i + 1)] = when.encode("ascii")
        else:
            self._odd_when[i] = when

    def offsets(self, i: int) -> list[int]:
        """Where turn ``i``'s lines' blocks were spilled (what the spill's ``put`` gave),
        in the order they were read."""
        first = self.spilled[i]
        return ([first] if first >= 0 else []) + self.more.get(i, [])

    def __getitem__(self, i: int) -> Turn:
        n = len(self.role)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        turn = Turn(i + 1, self.roles[self.role[i]], self.key[i])
        turn.model = self.models[self.model[i]]
        if self.when[WHEN_LEN * i]:
            turn.when = self.when[WHEN_LEN * i:WHEN_LEN * (i + 1)].decode("ascii")
        elif self._odd_when:
            turn.when = self._odd_when.get(i, "")
        flags = self.flags[i]
        if flags:
            turn.sidechain = bool(flags & SIDECHAIN)
            turn.compact_summary = bool(flags & SUMMARY)
            turn.compacted_before = bool(flags & COMPACTED)
            turn.results_only = bool(flags & RESULTS_ONLY)
            if flags & COMPACTED:
                turn.compacted_when = self.compacted_when.get(i, "")
        if self.notified:
            turn.notified = self.notified.get(i, ())
        turn.blocks = self.tools.get(i, [])
        return turn

    def __iter__(self):
        for i in range(len(self.role)):
            yield self[i]

    def marked(self):
        """The turns, in order, that hold a tool call or result, a delivered
        notification or a compaction mark — as :class:`MarkedTurn` values, which carry
        all that placement, spawns and compaction read of a turn."""
        if self._marked is None or self._marked[0] != len(self.role):
            self._marked = (len(self.role), sorted(
                {*self.tools, *self.notified,
                 *(i for i, f in enumerate(self.flags) if f & COMPACTED)}))
        tools, notified, flags, when = self.tools, self.notified, self.flags, self.compacted_when
        for i in self._marked[1]:
            compacted = bool(flags[i] & COMPACTED)
            yield MarkedTurn(i + 1, tools.get(i, ()), notified.get(i, ()), compacted,
                             when.get(i, "") if compacted else "")

    def keys_and_roles(self):
        """(key, role) of every turn, without building the turns (what telemetry counts)."""
        roles = self.roles
        return zip(self.key, (roles[r] for r in self.role))
