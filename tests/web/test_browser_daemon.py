"""The viewer in a real browser while a real daemon runs: the repositories, the session
list, the search box and the per-thread bars show what ``abcd usage`` and ``abcd search`` print, and
come from the daemon — every in-process index read is refused in the viewer here.

Where the browser cannot start, every test here skips and says why; CI installs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from abcd_client.view_source import DaemonSource
from abcd_daemon.web.source import LocalSource

from ..daemon.procs import DaemonProc, env_for
from .support import REAL_SESSION, ROOT, Served, browser, make_home, store_real  # noqa: F401

pytestmark = pytest.mark.slow
WORD = "parallel"  # in the real session's main thread and several sub-agents


def _refuse(*args, **kwargs):
    raise AssertionError("the viewer read the index in-process although a daemon answers")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("view-daemon")
    env = env_for(base)
    home = make_home(base)
    store_real(home)
    daemon = DaemonProc(env, base / "daemon.log").wait_ready(60)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(LocalSource, "keeper", _refuse)
            served = Served(DaemonSource(home))
            try:
                yield served, env
            finally:
                served.stop()
    finally:
        assert daemon.stop() == 0


@pytest.fixture(autouse=True)
def _daemons_store(world, monkeypatch):
    """The viewer finds the daemon through the environment, which every test's own
    ``abcd_env`` points elsewhere: point it back at the daemon's store."""
    _, env = world
    for key in ("ABCD_HOME", "ABCD_SOCKET", "TMPDIR"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("ABCD_LOCAL", raising=False)


def _cli(env, *args) -> dict:
    out = subprocess.run([sys.executable, "-m", "abcd_client", *args, "--json"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _cost(row: dict) -> str:
    return f"${row['cost_usd']:,.2f}" + ("+" if row["unpriced_tokens"] else "")


def test_the_session_list_shows_the_figures_abcd_usage_session_prints(world, browser):
    served, env = world
    want = {r["key"]: r for r in _cli(env, "usage", "session", "--all-repos")["rows"]}[REAL_SESSION]
    browser.get(served.at("/"))
    repo = browser.find_element("css selector", f'a[href="/r/{ROOT}"]')
    assert [td.text for td in repo.find_elements("xpath", "./ancestor::tr/td")][1] == "1"
    repo.click()
    link = browser.find_element("css selector", f'a[href="/r/{ROOT}/s/{REAL_SESSION}"]')
    cells = [td.text for td in link.find_elements("xpath", "./ancestor::tr/td")]
    assert cells[3] == "7"  # the main thread and six sub-agents
    assert cells[4] == f"{want['total']:,}" and cells[5] == _cost(want)


def test_the_search_box_lists_abcd_search_hits_and_a_hit_opens_its_turn(world, browser):
    served, env = world
    want = [(h["session_id"], h["thread"], h["turn"]) for h in
            _cli(env, "search", WORD, "--all-repos", "--limit", "50")["hits"]]
    assert len(want) > 5
    browser.get(served.at(f"/r/{ROOT}"))
    box = browser.find_element("css selector", "form.search input[name=q]")
    box.send_keys(WORD)
    box.submit()
    deadline = time.monotonic() + 20
    while "/search" not in browser.current_url and time.monotonic() < deadline:
        time.sleep(0.05)
    links = browser.find_elements("css selector", "main ol li > a")
    shown = []
    for a in links:
        path, _, anchor = a.get_attribute("href").partition("#")
        thread, turn = anchor[2:].rsplit("-", 1)
        shown.append((path.rsplit("/s/", 1)[1].split("?")[0], thread, int(turn)))
    assert shown == want
    k, (_, thread, turn) = max(((i, h) for i, h in enumerate(want) if h[1] != "main"),
                               key=lambda ih: ih[1][2])
    links[k].click()
    target = f"t-{thread}-{turn}"
    deadline = time.monotonic() + 20
    top = None
    while time.monotonic() < deadline:
        top = browser.execute_script(
            "var t = document.getElementById(arguments[0]);"
            "return t ? t.getBoundingClientRect().top : null", target)
        if top is not None and abs(top) < 60:
            break
        time.sleep(0.1)
    assert top is not None and abs(top) < 60, (target, top)


def test_the_bars_price_each_thread_as_abcd_usage_agent_does(world, browser):
    served, env = world
    want = {r["key"]: r for r in _cli(env, "usage", "agent", "--all-repos")["rows"]}
    browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
    rows = browser.find_elements("css selector", "svg.bars g.bar-row")
    assert len(rows) == 7
    priced = 0
    for row in rows:
        key = row.get_attribute("data-agent")
        label = row.find_elements("css selector", "text")[-1].text
        if key in want:
            assert label.endswith(" · " + _cost(want[key])), (key, label)
            priced += 1
        else:
            assert label.endswith(" · —"), (key, label)
    assert priced >= 2 and "main" in want
