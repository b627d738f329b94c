"""The outline of an artefact: its sections, each section's turns, and the times and
compaction marks its turn headings carry — read back from the Markdown abcd wrote.

The viewer renders the artefact itself (one source of truth: the bytes ``abcd history
reconstruct`` writes), so it needs to know where the artefact's own structures are.
They are only ever outside fences (DESIGN §5 invariant 7), and abcd's one fenced writer
(:mod:`abcd_daemon.reconstruct.fence`) opens a fence with a run of N ≥ 3 backticks
longer than any run inside it and closes it with the same run on a line of its own.
So a line scan that tracks the open fence finds every structure and nothing a
participant wrote: a forged ``## Agent`` heading inside a fence is content.

Contracts:
- :func:`outline` never raises; text it does not recognise stays in the chunk it is in;
- a section starts at a ``#``/``##`` heading outside a fence; inside a body section
  (``## Main thread``, ``## Agent `<id>` ``) a chunk starts at each ``### Turn <n>``
  heading — or at the ``[COMPACTED]`` marker that precedes one, so the marker travels
  with the turn it announces;
- joining every chunk of every section gives back the artefact exactly.

Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPEN = re.compile(r"^(`{3,})")
#: Every line that can matter: a fence line, a heading, a [COMPACTED] marker.
_CANDIDATE = re.compile(r"\n([`#>][^\n]*)")
_AGENT = re.compile(r"^## Agent `([A-Za-z0-9._-]+)`\s*$")
_TURN = re.compile(r"^### Turn (\d+) — ")
_TIME = re.compile(r" · (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s*$")
COMPACTED = "> **[COMPACTED]**"
#: Head sections by their heading line, and the key each gets.
_HEAD = {"## How to read this document": "how-to-read", "## Completeness": "completeness",
         "## Agent timeline": "timeline-table", "## Unattributed sub-agents": "unattributed"}
MAIN = "main"


@dataclass
class Turn:
    """One chunk of a body section: a turn (``number`` > 0) or the section's opening
    lines before its first turn (``number`` 0)."""

    number: int
    text: str
    when: str = ""  # the heading's ``YYYY-MM-DDTHH:MM:SSZ``, "" when it names none
    compacted: bool = False  # a [COMPACTED] marker precedes this turn


@dataclass
class Section:
    """``key``: ``header``, a head key of :data:`_HEAD`, ``main`` or an agent id;
    ``body``: whether it holds turns (the main thread or an agent)."""

    key: str
    body: bool
    chunks: list[Turn] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return section_anchor(self.key)

    @property
    def size(self) -> int:
        return sum(len(c.text) for c in self.chunks)


def section_anchor(key: str) -> str:
    """The HTML id of a section: ``main-thread``, ``agent-<id>``, or its head key."""
    if key == MAIN:
        return "main-thread"
    if key in _HEAD.values() or key == "header":
        return key
    return f"agent-{key}"


def turn_anchor(key: str, number: int) -> str:
    """The HTML id of turn ``number`` of the section ``key``."""
    return f"t-{key}-{number}"


@dataclass
class Outline:
    sections: list[Section]

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    def turn_times(self) -> dict[tuple[str, int], str]:
        """(section key, turn number) → the time its heading names."""
        return {(s.key, c.number): c.when for s in self.sections if s.body
                for c in s.chunks if c.number and c.when}

    def compactions(self) -> dict[str, list[int]]:
        """Section key → the turns a ``[COMPACTED]`` marker precedes."""
        out: dict[str, list[int]] = {}
        for s in self.sections:
            for c in s.chunks:
                if c.compacted and c.number:
                    out.setdefault(s.key, []).append(c.number)
        return out


def _section_key(line: str) -> tuple[str, bool] | None:
    if line.startswith("# "):
        return "header", False
    if not line.startswith("## "):
        return None
    stripped = line.rstrip("\n")
    if stripped == "## Main thread":
        return MAIN, True
    match = _AGENT.match(stripped)
    if match:
        return match.group(1), True
    return _HEAD.get(stripped, "section"), False


def outline(text: str) -> Outline:
    """The :class:`Outline` of the artefact ``text`` (see the module docstring).

    Only lines that can open a fence or start a structure are visited (a regex
    finds them); a fence is skipped whole by finding its closing line; chunks are
    slices of ``text`` between structure lines."""
    sections: list[Section] = []
    current: Section | None = None
    chunk = Turn(0, "")
    start = 0  # where the open chunk's text starts

    def cut(at: int, new: Turn) -> Turn:
        nonlocal start
        chunk.text = text[start:at]
        if current is not None and (chunk.text or chunk.number):
            current.chunks.append(chunk)
        start = at
        return new

    padded = "\n" + text  # every line starts after a "\n": offsets shift by one
    pos = 0
    while True:
        match = _CANDIDATE.search(padded, pos)
        if match is None:
            break
        line, at, pos = match.group(1), match.start(), match.end()
        opened = _OPEN.match(line)
        if opened:  # skip the fence whole: its closing line is the next one that is
            ticks = "\n" + opened.group(1)  # that run of backticks and nothing else
            while True:
                close = padded.find(ticks, pos)
                if close < 0:
                    pos = len(padded)
                    break
                end = padded.find("\n", close + 1)
                end = len(padded) if end < 0 else end
                pos = end
                if not padded[close + 1:end].strip("`").strip():
                    break
            continue
        key = _section_key(line)
        if key is not None:
            if current is None and at:
                current = Section("header", False)
                sections.append(current)
            chunk = cut(at, Turn(0, ""))
            current = Section(*key)
            sections.append(current)
        elif current is not None and current.body:
            turn = _TURN.match(line)
            if line.startswith(COMPACTED):
                chunk = cut(at, Turn(0, "", compacted=True))
            elif turn:
                if not (chunk.compacted and not chunk.number):
                    chunk = cut(at, Turn(0, ""))
                chunk.number = int(turn.group(1))
                when = _TIME.search(line)
                chunk.when = when.group(1) if when else ""
    if current is None and text:
        current = Section("header", False)
        sections.append(current)
    cut(len(text), chunk)
    return Outline(sections)
