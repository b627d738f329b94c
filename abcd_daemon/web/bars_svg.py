"""Per-agent token and cost bars: one row per thread, in the timeline's lane order.

Contracts:
- a row's bar is the thread's four token figures stacked (input, output, cache write,
  cache read), scaled to the largest thread's total; the numbers are the telemetry's
  own (counted once per response id);
- cost is shown only where the caller priced it (the ``agent`` rows of ``abcd usage``'s
  report, from the index and the shipped pricing table); a thread with tokens of a model the table does not know
  reads ``$x+`` (a lower bound), one with no price at all ``—``; no cost is invented;
- each row links to its section, like its timeline lane.

Pure; :func:`bars_svg` returns the SVG as ``str``.
"""

from __future__ import annotations

from .outline import MAIN, section_anchor
from .timeline_svg import esc

WIDTH = 1200
LABEL_W = 250
NUM_W = 210
ROW_H = 18
TOP = 26
SEGMENTS = (("input", "#4e79a7"), ("output", "#f28e2b"), ("cache_creation_input", "#59a14f"),
            ("cache_read_input", "#bab0ac"))
NAMES = {"input": "input", "output": "output", "cache_creation_input": "cache write",
         "cache_read_input": "cache read"}


def cost_label(cost: tuple[float, int] | None) -> str:
    """``$1.23``, ``$1.23+`` (some tokens unpriced) or ``—`` (nothing priced)."""
    if cost is None:
        return "—"
    usd, unpriced = cost
    return f"${usd:,.2f}" + ("+" if unpriced else "")


def bars_svg(telemetry, costs: dict[str, tuple[float, int]] | None) -> str:
    """The SVG of the per-thread bars; ``costs`` maps a lane key (``main`` or agent id)
    to (USD, unpriced tokens), or is None when nothing could be priced."""
    agents = telemetry.agents
    peak = max((a.tokens.total for a in agents), default=0) or 1
    plot = WIDTH - LABEL_W - NUM_W
    height = TOP + ROW_H * len(agents) + 6
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" viewBox="0 0 {WIDTH} {height}" '
           f'width="{WIDTH}" height="{height}" role="img" font-family="sans-serif" '
           'font-size="11"><title>Tokens and cost per thread</title>']
    lx = LABEL_W
    for name, colour in SEGMENTS:
        out.append(f'<rect x="{lx}" y="6" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{lx + 14}" y="15" fill="#333">{NAMES[name]}</text>')
        lx += 100
    for i, a in enumerate(agents):
        key = MAIN if a.is_main_thread else a.agent_id
        y = TOP + i * ROW_H
        label = "main thread" if a.is_main_thread else f"{a.agent_id[:18]} · {a.agent_type or 'type unknown'}"
        cost = costs.get(key) if costs is not None else None
        out.append(f'<g class="bar-row" data-agent="{esc(key)}"><a href="#{esc(section_anchor(key))}">'
                   f'<title>{esc(label)}: {a.tokens.total:,} tokens over '
                   f'{a.tokens.api_responses} responses · cost {cost_label(cost)}</title>'
                   f'<rect x="0" y="{y}" width="{WIDTH}" height="{ROW_H}" fill="transparent"/>'
                   f'<text x="6" y="{y + 13}" fill="#222">{esc(label, 80)}</text>')
        x = float(LABEL_W)
        for name, colour in SEGMENTS:
            value = getattr(a.tokens, name)
            if value:
                w = value / peak * plot
                out.append(f'<rect x="{round(x, 1)}" y="{y + 3}" width="{round(max(w, 0.5), 1)}" '
                           f'height="{ROW_H - 6}" fill="{colour}"/>')
                x += w
        out.append(f'<text x="{WIDTH - 6}" y="{y + 13}" text-anchor="end" fill="#222">'
                   f'{a.tokens.total:,} tok · {cost_label(cost)}</text></a></g>')
    out.append("</svg>")
    return "".join(out)
