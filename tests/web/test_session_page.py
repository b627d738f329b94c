"""A session page: served lazily it still holds every section, and its parts together
are every turn; exported, it is one file that needs nothing else."""

from __future__ import annotations

import re

import pytest

from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.web import session_page
from abcd_daemon.web.session_page import SessionView, export_html

from .support import REAL_SESSION, make_home, store_real


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    lane = store_real(make_home(tmp_path_factory.mktemp("sp")))
    return reconstruct(lane, ReconstructOptions(session_id=REAL_SESSION), now_ns=0)


def _turn_ids(html: str) -> list[str]:
    return re.findall(r'<div class="turn" id="([^"]+)"', html)


def test_a_lazy_page_holds_every_section_and_its_parts_hold_every_other_turn(real, monkeypatch):
    monkeypatch.setattr(session_page, "PART_CHARS", 4000)
    monkeypatch.setattr(session_page, "EAGER_CHARS", 4000)
    view = SessionView(real, None)
    lazy = view.page(lazy=True, part_url=lambda k: f"/p/{k}")
    whole = export_html(real)
    for a in real.telemetry.agents:
        anchor = "main-thread" if a.is_main_thread else f"agent-{a.agent_id}"
        assert f'id="{anchor}"' in lazy
    placeholders = re.findall(r'data-src="/p/(\d+)"', lazy)
    assert placeholders and len(placeholders) < len(view.parts)
    fetched = "".join(view.part_html(int(k)) for k in placeholders)
    assert sorted(_turn_ids(lazy) + _turn_ids(fetched)) == sorted(_turn_ids(whole))
    assert len(_turn_ids(whole)) > 20


def test_the_export_is_self_contained_and_loads_nothing(real):
    html = export_html(real)
    assert "<style>" in html and "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)
    assert "<script" not in html and "/static/" not in html and 'class="part"' not in html
    assert 'class="timeline"' in html and 'class="bars"' in html


def test_a_part_that_does_not_exist_is_an_index_error(real):
    view = SessionView(real, None)
    with pytest.raises(IndexError):
        view.part_html(len(view.parts))
    with pytest.raises(IndexError):
        view.part_html(-1)
