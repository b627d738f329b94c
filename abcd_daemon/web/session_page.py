"""One session as a page: header, the timeline picture, the per-thread bars, the
artefact's head sections, then its body — eagerly or in lazily loaded parts.

Contracts:
- the page is the artefact (the bytes ``abcd history reconstruct`` writes) rendered
  by :mod:`.markdown`, plus two pictures drawn from its telemetry; it adds no text of
  a transcript the artefact does not hold;
- every section keeps its anchor (:func:`~.outline.section_anchor`) and its heading
  in the first response, so a lane's link always has somewhere to land (its
  provenance lines travel with its first turns); each turn has its own
  anchor (:func:`~.outline.turn_anchor`), the target of search hits;
- a body section's turns are grouped into parts of about :data:`PART_CHARS` of
  Markdown; with ``lazy``, the first part (the main thread's first turns) and the
  parts after it that fit within :data:`EAGER_CHARS` in all are in the page and the rest are placeholders that ``app.js`` fills
  from ``part_url(k)`` as they near the viewport (each also a plain link);
  without ``lazy`` (the static export) everything is in the page and no script is
  needed.

Pure; build a :class:`SessionView` once per reconstruction and reuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .bars_svg import bars_svg, cost_label
from .markdown import to_html
from .outline import MAIN, Section, Turn, outline, turn_anchor
from .shell import e, line, page, tokens
from .timeline_svg import lanes, timeline_svg

PART_CHARS = 32_000
EAGER_CHARS = 32_000
_DETAILS = {"completeness": "Completeness", "how-to-read": "How to read this document",
            "timeline-table": "Agent timeline (table)"}


@dataclass
class Part:
    section: str
    chunks: list[Turn]

    @property
    def first(self) -> int:
        return next((c.number for c in self.chunks if c.number), 0)

    @property
    def last(self) -> int:
        return self.chunks[-1].number

    @property
    def size(self) -> int:
        return sum(len(c.text) for c in self.chunks)


def _heading(key: str) -> str:
    """A body section's heading, as the renderer would write it (its id is on the
    ``<section>``): built here so every section is in the page, whatever is lazy."""
    return "<h2>Main thread</h2>" if key == MAIN else f"<h2>Agent <code>{e(key)}</code></h2>"


def _parts(section: Section) -> list[Part]:
    """The section's chunks in parts; its opening chunk (provenance) without the
    heading line, which :func:`_heading` writes."""
    parts: list[Part] = []
    for chunk in section.chunks:
        if chunk.number == 0 and not chunk.compacted:
            _, _, rest = chunk.text.partition("\n")
            chunk = Turn(0, rest)
        if not parts or parts[-1].size + len(chunk.text) > PART_CHARS:
            parts.append(Part(section.key, []))
        parts[-1].chunks.append(chunk)
    return parts


def _what(part: Part) -> str:
    if not part.first:
        return "provenance"
    return f"turns {part.first}–{part.last}" if part.last != part.first else f"turn {part.first}"


def _turns_html(chunks: list[Turn], key: str) -> str:
    return "".join(f'<div class="turn" id="{e(turn_anchor(key, c.number))}">{to_html(c.text)}</div>'
                   if c.number else f'<div class="provenance">{to_html(c.text)}</div>'
                   for c in chunks)


class SessionView:
    """A session ready to serve: its outline, lanes, pictures and parts."""

    def __init__(self, reconstruction, costs: dict | None, *, repository: str = "") -> None:
        self.telemetry = reconstruction.telemetry
        self.repository = repository
        self.outline = outline(reconstruction.artefact.decode("utf-8", "replace"))
        self.lanes = lanes(self.telemetry, self.outline)
        self.costs = costs
        self.served: str | None = None  # the served page, once built (see .app)
        self.served_body: str | None = None  # ... and its body
        self.parts: list[Part] = []
        self._part_of: dict[str, list[int]] = {}
        for section in self.outline.sections:
            if section.body:
                for part in _parts(section):
                    self._part_of.setdefault(section.key, []).append(len(self.parts))
                    self.parts.append(part)

    def part_html(self, k: int) -> str:
        """The HTML fragment of part ``k`` (IndexError when there is none)."""
        if k < 0:
            raise IndexError(k)
        part = self.parts[k]
        return _turns_html(part.chunks, part.section)

    def summary(self) -> str:
        t = self.telemetry
        c = t.completeness
        subs = c.agents_total - (1 if c.main_thread_present else 0)
        total_cost = None
        if self.costs:
            total_cost = (sum(v[0] for v in self.costs.values()),
                          sum(v[1] for v in self.costs.values()))
        facts = [("started", f"{t.started_at[:19]}Z" if t.started_at else "—"),
                 ("duration", _duration(t.wall_clock_seconds) if t.started_at else "—"),
                 ("agents", f"{c.agents_total} ({subs} sub-agent(s))"),
                 ("turns", f"{t.turns.total}"), ("tokens", tokens(t.tokens.total)),
                 ("cost", cost_label(total_cost)),
                 ("models", ", ".join(t.models) or "—")]
        return '<dl class="facts">' + "".join(f"<dt>{e(k)}</dt><dd>{line(v, 400)}</dd>"
                                              for k, v in facts) + "</dl>"

    def chunks(self, *, lazy: bool, part_url: Callable[[int], str] | None = None) -> Iterator[str]:
        """The body in document order, a piece at a time (the header with the pictures
        first, then each section and each of its parts), so a server can send each as
        soon as it is rendered; joined, they are :meth:`body`."""
        eager = EAGER_CHARS if lazy else None
        for section in self.outline.sections:
            if section.key == "header":
                yield (to_html(section.chunks[0].text if section.chunks else "") + self.summary()
                       + '<section class="pictures" id="timeline"><h2>Timeline</h2>'
                       '<p class="hint">One lane per thread; a dashed line is a spawn, a '
                       'dotted green one a join, a red diamond a compaction. Click a lane '
                       'to jump to its section.</p><div class="scroll">'
                       f"{timeline_svg(self.lanes)}</div><h2>Tokens and cost per thread"
                       f'</h2><div class="scroll">{bars_svg(self.telemetry, self.costs)}'
                       "</div></section>")
                continue
            if section.key in _DETAILS:
                text = section.chunks[0].text.partition("\n")[2] if section.chunks else ""
                yield (f'<details id="{e(section.anchor)}"><summary>{_DETAILS[section.key]}'
                       f"</summary>{to_html(text)}</details>")
                continue
            if not section.body:
                yield (f'<section id="{e(section.anchor)}">'
                       f'{"".join(to_html(c.text) for c in section.chunks)}</section>')
                continue
            yield (f'<section class="thread" id="{e(section.anchor)}" data-key="{e(section.key)}">'
                   + _heading(section.key))
            for k in self._part_of.get(section.key, ()):
                part = self.parts[k]
                if eager is None or (k == 0 or part.size <= eager) and eager > 0:
                    yield _turns_html(part.chunks, part.section)
                    if eager is not None:
                        eager -= part.size
                else:
                    eager = 0  # parts stay in document order: none after the first lazy one
                    url = part_url(k) if part_url else "#"
                    yield (f'<div class="part" data-src="{e(url)}" data-section="{e(part.section)}" '
                           f'data-first="{part.first}" data-last="{part.last}">'
                           f'<a href="{e(url)}">{_what(part)} ({part.size // 1000} kB) — loading as '
                           "you scroll</a></div>")
            yield "</section>"

    def body(self, *, lazy: bool, part_url: Callable[[int], str] | None = None) -> str:
        return "".join(self.chunks(lazy=lazy, part_url=part_url))

    def title(self) -> str:
        return title(self.telemetry.session_id)

    def page(self, *, lazy: bool, part_url=None, crumbs=()) -> str:
        """The whole document: served (``lazy``, linked assets) or exported."""
        return page(self.title(), self.body(lazy=lazy, part_url=part_url),
                    assets="linked" if lazy else "inline", crumbs=list(crumbs))


def title(session_id: str) -> str:
    """A session page's title (known from its URL, before the session is read)."""
    return f"Session {session_id[:8]}"


def _duration(seconds: float) -> str:
    from ..reconstruct.spans import duration

    return duration(seconds)


def export_html(reconstruction, costs: dict | None = None) -> str:
    """The static export: the same session page as one self-contained HTML file."""
    return SessionView(reconstruction, costs).page(lazy=False)

