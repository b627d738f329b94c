"""Per-thread bars: the telemetry's tokens, and a cost only where one was priced."""

from __future__ import annotations

import msgspec

from abcd_daemon.reconstruct.schema import Telemetry
from abcd_daemon.web.bars_svg import bars_svg, cost_label


def _telemetry() -> Telemetry:
    agent = {"is_main_thread": False, "spawn_depth": 1, "record": "r", "wall_clock_seconds": 0,
             "turns": {}, "tool_calls": {}, "models": [], "lines": 0, "lines_unparseable": 0,
             "lines_unrecognised": 0, "usage_without_message_id": 0,
             "responses_without_stop_reason": 0, "copied_lines": 0}
    return msgspec.convert({
        "schema_version": 1, "session_id": "s", "root_commit": "7" * 40, "mode": "full",
        "generated_at": "", "wall_clock_seconds": 0, "turns": {}, "tokens": {}, "tool_calls": {},
        "models": [], "agent_types": [],
        "agents": [dict(agent, is_main_thread=True, spawn_depth=0,
                        tokens={"input": 10, "output": 20, "total": 30}),
                   dict(agent, agent_id="a1", agent_type="<b>x</b>",
                        tokens={"cache_read_input": 90, "total": 90})],
        "completeness": {"main_thread_present": True, "records_found": 2, "records_used": 2,
                         "agents_total": 2, "agents_unattributed": 0,
                         "agents_without_spawn_point": 0, "agents_without_join_point": 0,
                         "agents_without_agent_type": 0,
                         "agents_whose_parent_is_not_in_this_set": 0, "lines_unparseable": 0,
                         "lines_unrecognised": 0, "lines_not_utf8": 0,
                         "usage_without_message_id": 0, "responses_without_stop_reason": 0,
                         "copied_lines": 0, "elided_blocks": 0, "elided_bytes": 0,
                         "omitted_turns": 0}}, Telemetry)


def test_a_cost_is_shown_only_where_priced_and_a_partial_one_is_marked_a_lower_bound():
    assert cost_label(None) == "—"
    assert cost_label((1.234, 0)) == "$1.23"
    assert cost_label((1.234, 50)) == "$1.23+"


def test_one_row_per_thread_linking_its_section_with_the_telemetrys_totals():
    svg = bars_svg(_telemetry(), {"main": (0.5, 0)})
    assert svg.count('class="bar-row"') == 2
    assert 'href="#main-thread"' in svg and 'href="#agent-a1"' in svg
    assert "30 tok · $0.50" in svg and "90 tok · —" in svg
    assert "<b>" not in svg


def test_without_any_price_every_cost_reads_unknown():
    svg = bars_svg(_telemetry(), None)
    assert "$" not in svg and svg.count("tok · —") == 2
