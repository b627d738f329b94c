"""The timeline picture: one lane per thread, spawn → start → end → join, compaction
marks, and how many sub-agents ran at once — as one server-rendered SVG.

Contracts:
- one lane per thread of the telemetry, in its order (the main thread, then the
  artefact's section order: placed, compaction, unattributed agents); each lane is
  a link to its section's anchor (:func:`~.outline.section_anchor`) and carries
  ``data-agent`` (``main`` or the agent id);
- a lane's bar spans the thread's first and last timestamp; a placed agent's spawn
  is drawn from its host lane at the host turn's time down to its own start, its join
  from its end back up to the host lane at the time the result arrived; compaction
  marks sit on the lane at the turn a ``[COMPACTED]`` marker precedes; a spawned agent
  whose transcript is not stored is a hollow mark on its host lane;
- times come from the telemetry and from the turn headings the artefact carries
  (:class:`~.outline.Outline`); a time that is unknown is not drawn — the lane says
  "no times" rather than guessing one;
- every text a participant could have influenced (ids, agent types) is made one safe
  line and XML-escaped.

Pure; :func:`timeline_svg` returns the SVG as ``str``.
"""

from __future__ import annotations

import html
import zlib
from dataclasses import dataclass, field

from ..reconstruct.spans import duration
from ..store.record import parse_rfc3339_ns
from ..termsafe import clean_line
from .outline import MAIN, Outline, section_anchor

WIDTH = 1200
LABEL_W = 250
RIGHT = 24
AXIS_H = 30
STRIP_H = 34
LANE_H = 20
BAR_H = 12
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#ff9da7",
           "#9c755f")
MAIN_COLOUR = "#2f4b7c"
COMPACTION_COLOUR = "#b07aa1"
UNPLACED_COLOUR = "#9a9a9a"
_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
          43200, 86400, 172800, 604800)


def esc(text: str, cap: int = 200) -> str:
    """One safe, XML-escaped line of at most ``cap`` bytes."""
    return html.escape(clean_line(text, cap), quote=True)


def _ns(stamp: str) -> int:
    if not stamp:
        return 0
    try:
        return parse_rfc3339_ns(stamp)
    except ValueError:
        return 0


def type_colour(agent_type: str) -> str:
    """A stable colour per agent type."""
    return PALETTE[zlib.crc32(agent_type.encode("utf-8", "replace")) % len(PALETTE)]


@dataclass
class Lane:
    key: str  # "main" or the agent id
    label: str
    colour: str
    start: int = 0
    end: int = 0
    host: str = ""  # the lane key of the thread that spawned it ("" for none)
    spawn: int = 0
    join: int = 0
    compactions: list[int] = field(default_factory=list)
    missing: list[tuple[int, str]] = field(default_factory=list)  # (time, who) not stored
    title: str = ""


def lanes(telemetry, outline: Outline) -> list[Lane]:
    """The lanes of a session from its telemetry and its artefact's outline."""
    times = outline.turn_times()
    compactions = outline.compactions()
    out: list[Lane] = []
    for a in telemetry.agents:
        key = MAIN if a.is_main_thread else a.agent_id
        if a.is_main_thread:
            label, colour = "main thread", MAIN_COLOUR
        else:
            kind = a.agent_type or "type unknown"
            label = f"{a.agent_id[:18]} · {kind}"
            colour = (COMPACTION_COLOUR if a.compaction_of else
                      type_colour(a.agent_type) if a.spawned_at_turn else UNPLACED_COLOUR)
        lane = Lane(key, label, colour, _ns(a.started_at), _ns(a.ended_at))
        host = a.spawned_in or a.compaction_of
        if host:
            lane.host = host
            turn = a.spawned_at_turn or a.compacted_at_turn
            lane.spawn = _ns(times.get((host, turn), "")) if a.spawned_at_turn else 0
            lane.join = _ns(a.joined_at) or _ns(times.get((host, a.joined_at_turn), ""))
        lane.compactions = [t for t in (_ns(times.get((key, n), ""))
                                        for n in compactions.get(key, ())) if t]
        span = (f"{a.started_at[:19]}Z → {a.ended_at[:19]}Z ({duration(a.wall_clock_seconds)})"
                if a.started_at else "no times recorded")
        lane.title = (f"{'main thread' if a.is_main_thread else 'agent ' + a.agent_id}"
                      f"{' (' + a.agent_type + ')' if a.agent_type else ''} · {span} · "
                      f"{a.turns.total} turns · {a.tokens.total:,} tokens")
        out.append(lane)
    by_key = {lane.key: lane for lane in out}
    for m in telemetry.completeness.missing_agents:
        host = by_key.get(m.spawned_in)
        when = _ns(times.get((m.spawned_in, m.spawned_at_turn), ""))
        if host is not None and when:
            host.missing.append((when, m.agent_id or "an agent with no id"))
    return out


def _step(span_s: float) -> int:
    return next((s for s in _STEPS if span_s / s <= 8), _STEPS[-1])


def _tick_label(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"+{h}h{m:02d}m" if m else f"+{h}h"
    if m:
        return f"+{m}m{s:02d}s" if s else f"+{m}m"
    return f"+{s}s"


def _concurrency(subs: list[Lane]) -> tuple[list[tuple[int, int]], int]:
    """(time, running sub-agents) steps and the maximum."""
    events = sorted([(lane.start, 1) for lane in subs] + [(lane.end, -1) for lane in subs])
    steps, running, peak = [], 0, 0
    for when, delta in events:
        running += delta
        peak = max(peak, running)
        steps.append((when, running))
    return steps, peak


def timeline_svg(session_lanes: list[Lane]) -> str:
    """The SVG of ``session_lanes`` (see the module docstring)."""
    timed = [lane for lane in session_lanes if lane.start and lane.end >= lane.start]
    t0 = min((lane.start for lane in timed), default=0)
    t1 = max([lane.end for lane in timed] + [lane.join for lane in timed], default=0)
    span = max(t1 - t0, 1)
    plot = WIDTH - LABEL_W - RIGHT
    top = AXIS_H + STRIP_H
    height = top + LANE_H * len(session_lanes) + 8

    def x(ns: int) -> float:
        return round(LABEL_W + (ns - t0) / span * plot, 1)

    def y(i: int) -> float:
        return top + i * LANE_H + LANE_H / 2

    rows = {lane.key: i for i, lane in enumerate(session_lanes)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} '
           f'{height}" width="{WIDTH}" height="{height}" role="img" font-family="sans-serif" '
           'font-size="11"><title>Agent timeline: one lane per thread</title>']
    if timed:
        step = _step(span / 1e9)
        out.append(f'<text x="4" y="14" fill="#555">t0 {esc(_iso(t0))}</text>')
        k = 0
        while k * step * 1e9 <= span:
            tx = x(t0 + int(k * step * 1e9))
            out.append(f'<line x1="{tx}" y1="{AXIS_H - 6}" x2="{tx}" y2="{height}" '
                       'stroke="#e4e4e4"/>')
            out.append(f'<text x="{tx}" y="{AXIS_H - 9}" text-anchor="middle" fill="#555">'
                       f'{_tick_label(k * step)}</text>')
            k += 1
        steps, peak = _concurrency([lane for lane in timed if lane.key != MAIN])
        if peak:
            base = AXIS_H + STRIP_H - 6
            scale = (STRIP_H - 10) / peak
            path, last = [f"M{x(t0)},{base}"], base
            for when, running in steps:
                path.append(f"L{x(when)},{last}")
                last = round(base - running * scale, 1)
                path.append(f"L{x(when)},{last}")
            path.append(f"L{x(t1)},{last}L{x(t1)},{base}Z")
            out.append(f'<path class="concurrency" d="{"".join(path)}" fill="#cfd8e6" '
                       'stroke="#6b84a8" stroke-width="0.8"/>')
            out.append(f'<text x="4" y="{base - 4}" fill="#333">sub-agents running '
                       f'(max {peak})</text>')
    for i, lane in enumerate(session_lanes):
        if i % 2:
            out.append(f'<rect x="0" y="{top + i * LANE_H}" width="{WIDTH}" height="{LANE_H}" '
                       'fill="#f6f7f9"/>')
    dots = []  # spawn and join points, drawn over the bars
    for lane in session_lanes:  # connectors under the bars
        host = rows.get(lane.host)
        if host is None or not lane.start:
            continue
        ly, hy = y(rows[lane.key]), y(host)
        if lane.spawn:
            out.append(f'<path class="spawn" d="M{x(lane.spawn)},{hy}V{ly}H{x(lane.start)}" '
                       'fill="none" stroke="#555" stroke-width="1" stroke-dasharray="3 2"/>')
            dots.append(f'<circle class="spawn-point" cx="{x(lane.spawn)}" cy="{hy}" r="3" '
                        'fill="#fff" stroke="#333" stroke-width="1.2"/>')
        if lane.join:
            out.append(f'<path class="join" d="M{x(lane.end)},{ly}H{x(lane.join)}V{hy}" '
                       'fill="none" stroke="#2a9d5c" stroke-width="1" stroke-dasharray="1 2"/>')
            dots.append(f'<circle class="join-point" cx="{x(lane.join)}" cy="{hy}" r="3" '
                        'fill="#2a9d5c" stroke="#fff" stroke-width="1"/>')
    for i, lane in enumerate(session_lanes):
        cy = y(i)
        out.append(f'<g class="lane" data-agent="{esc(lane.key)}" data-order="{i}">'
                   f'<a href="#{esc(section_anchor(lane.key))}"><title>{esc(lane.title, 400)}'
                   f'</title><rect x="0" y="{top + i * LANE_H}" width="{WIDTH}" '
                   f'height="{LANE_H}" fill="transparent"/>'
                   f'<text x="6" y="{cy + 4}" fill="#222">{esc(lane.label, 80)}</text>')
        if lane.start and lane.end >= lane.start:
            width = max(x(lane.end) - x(lane.start), 1.5)
            out.append(f'<rect class="bar" x="{x(lane.start)}" y="{cy - BAR_H / 2}" '
                       f'width="{round(width, 1)}" height="{BAR_H}" rx="2" '
                       f'fill="{lane.colour}"/>')
        else:
            out.append(f'<text x="{LABEL_W}" y="{cy + 4}" fill="#999">no times</text>')
        for when in lane.compactions:
            cx = x(when)
            out.append(f'<path class="compaction" d="M{cx},{cy - 7}L{cx + 4},{cy}L{cx},{cy + 7}'
                       f'L{cx - 4},{cy}Z" fill="#d62728" stroke="#fff" stroke-width="0.8">'
                       '<title>[COMPACTED] the context was compacted here</title></path>')
        for when, who in lane.missing:
            out.append(f'<circle class="not-stored" cx="{x(when)}" cy="{cy}" r="4" fill="#fff" '
                       f'stroke="#d62728"><title>spawned {esc(who)} here; its transcript is '
                       'not stored</title></circle>')
        out.append("</a></g>")
    out.extend(dots)
    out.append("</svg>")
    return "".join(out)


def _iso(ns: int) -> str:
    from ..store.record import format_rfc3339_ns

    return format_rfc3339_ns(ns)[:19] + "Z (UTC)"
