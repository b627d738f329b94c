"""The values ``abcd search`` and ``abcd usage`` answer with, and the filters they take.

Plain msgspec Structs with no SQLite in sight: the wire protocol carries them (the CLI
decodes a daemon's reply without importing the index, and defining them costs a served
verb's start-up nothing — dataclasses would import ``inspect`` and compile their
methods), and :mod:`.query` and :mod:`.usage` build them. Each is the same value
in-process and over the socket.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import msgspec

ROLES = ("user", "assistant", "tool")
REPORTS = ("daily", "weekly", "monthly", "session", "repo", "model", "agent-type", "agent")
#: A query matching more turns than this is ranked among its newest this many matches.
RANK_WINDOW = 2_000


class Filters(msgspec.Struct, frozen=True):
    roots: tuple[str, ...] = ()  # empty: every repository
    session: str = ""  # a session id or a unique prefix of one
    agent_type: str = ""  # "main" selects main threads
    role: str = ""
    tool: str = ""
    since_ns: int = 0
    until_ns: int = 0
    limit: int = 20
    window: int = RANK_WINDOW  # rank among the newest this many matches (0: every match)


class Hit(msgspec.Struct, frozen=True):
    session_id: str
    root: str
    thread: str  # "main" or the agent id
    agent_type: str
    turn: int
    role: str
    when: str
    snippet: str
    score: float

    def as_json(self) -> dict:
        return msgspec.structs.asdict(self)


class Row(msgspec.Struct):
    """One row of a usage report: the four token figures, responses, cost."""

    key: str
    input: int = 0
    output: int = 0
    cache_creation: int = 0
    cache_read: int = 0
    responses: int = 0
    cost_usd: float = 0.0
    unpriced_tokens: int = 0
    models: dict[str, "Row"] = msgspec.field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_creation + self.cache_read

    def add(self, i: int, o: int, cw: int, cr: int, cost: float | None, n: int = 1) -> None:
        self.input += i
        self.output += o
        self.cache_creation += cw
        self.cache_read += cr
        self.responses += n
        if cost is None:
            self.unpriced_tokens += i + o + cw + cr
        else:
            self.cost_usd += cost

    def as_json(self, breakdown: bool) -> dict:
        out = {"key": self.key, "input": self.input, "output": self.output, "cache_creation": self.cache_creation,
               "cache_read": self.cache_read, "total": self.total, "responses": self.responses,
               "cost_usd": round(self.cost_usd, 6), "unpriced_tokens": self.unpriced_tokens}
        if breakdown:
            out["models"] = [m.as_json(False) for m in sorted(self.models.values(), key=lambda r: r.key)]
        return out


class Report(msgspec.Struct):
    kind: str
    rows: list[Row]
    unpriced: list[str]
    pricing_as_of: str
    #: usage known only from agent_progress copies of agents whose transcript is not
    #: stored: never part of ``rows`` (:mod:`.usage`)
    apart: list[Row] = msgspec.field(default_factory=list)


class SessionSummary(msgspec.Struct):
    """One session of a repository as the index holds it (``abcd view``'s list row)."""

    session_id: str
    agents: int  # records indexed: the main thread and each stored sub-agent
    first_ns: int  # the earliest turn time (0: no turn carries one)
    last_ns: int  # the latest turn time
    last_captured_at: str
    usage: Row | None = None  # the ``session`` report's row (None: no response indexed)


class SessionPage(msgspec.Struct):
    """A slice of a repository's sessions, newest first, and how many there are."""

    total: int
    offset: int
    sessions: list[SessionSummary]
    pricing_as_of: str = ""


class RepositorySummary(msgspec.Struct):
    """One repository as the index holds it (``abcd view``'s home page row)."""

    root: str
    sessions: int
    last_captured_at: str
