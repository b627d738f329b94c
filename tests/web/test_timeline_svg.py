"""The timeline picture: one linked lane per thread, in order, with spawn, join and
compaction drawn where the artefact says they happened."""

from __future__ import annotations

import re

import pytest

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.web.outline import outline
from abcd_daemon.web.timeline_svg import Lane, lanes, timeline_svg

from .support import REAL_SESSION, make_home, store_real


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    lane = store_real(make_home(tmp_path_factory.mktemp("tl")))
    r = reconstruct(lane, ReconstructOptions(session_id=REAL_SESSION), now_ns=0)
    return r, outline(r.artefact.decode())


def test_one_lane_per_thread_in_the_telemetrys_order_each_linking_its_section(real):
    r, o = real
    svg = timeline_svg(lanes(r.telemetry, o))
    shown = re.findall(r'<g class="lane" data-agent="([^"]+)" data-order="\d+"><a href="#([^"]+)"', svg)
    subs = [a.agent_id for a in r.telemetry.agents if not a.is_main_thread]
    assert shown == [("main", "main-thread")] + [(a, f"agent-{a}") for a in subs]
    assert svg.count('class="bar"') == 7


def test_every_placed_agent_is_drawn_spawned_from_and_joined_back_to_its_host(real):
    r, o = real
    drawn = lanes(r.telemetry, o)
    subs = [lane for lane in drawn if lane.key != "main"]
    assert all(lane.host == "main" and lane.spawn and lane.join for lane in subs)
    assert all(lane.spawn <= lane.start <= lane.end <= lane.join for lane in subs)
    svg = timeline_svg(drawn)
    assert svg.count('class="spawn"') == 6 and svg.count('class="join"') == 6
    assert "sub-agents running (max 3)" in svg  # the two waves of three overlap


def test_compaction_marks_and_unstored_agents_are_drawn_on_their_lane():
    t0 = 1_700_000_000 * 10**9
    main = Lane("main", "main thread", "#000", t0, t0 + 60 * 10**9, compactions=[t0 + 30 * 10**9],
                missing=[(t0 + 10 * 10**9, "agent-gone")])
    svg = timeline_svg([main])
    assert svg.count('class="compaction"') == 1 and svg.count('class="not-stored"') == 1


def test_a_lane_without_times_says_so_instead_of_guessing():
    svg = timeline_svg([Lane("main", "main thread", "#000")])
    assert "no times" in svg and 'class="bar"' not in svg


def test_hostile_text_in_a_lane_is_one_escaped_line():
    svg = timeline_svg([Lane("a<b>", '<script>x</script>\n"q"', "#000", 1, 2, title="<i>t</i>")])
    assert "<script" not in svg and "<i>" not in svg and "<b>" not in svg
    assert "&lt; script&gt;" in svg or "&lt;script&gt;" in svg


def test_a_compacted_session_marks_each_compaction_on_the_lane_it_happened_in():
    from abcd_daemon.web.timeline_svg import COMPACTION_COLOUR

    from ..reconstruct.support import run
    from ..reconstruct.test_compaction import COMPACT, _compacted_session

    r = run(_compacted_session())
    drawn = {lane.key: lane for lane in lanes(r.telemetry, outline(r.artefact.decode()))}
    assert len(drawn["main"].compactions) == 2  # the two [COMPACTED] markers of the main thread
    assert drawn[COMPACT].colour == COMPACTION_COLOUR and drawn[COMPACT].host == "main"
    assert timeline_svg(list(drawn.values())).count('class="compaction"') == 2
