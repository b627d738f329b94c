"""Take the README's picture: a real fixture session's timeline in headless Chromium.

Stores the real session ``ef958aa1`` (six sub-agents in two parallel waves, from
``tests/fixtures/claude-code-log/real_projects``) in a temporary ABCD_HOME, serves it
with the viewer, and saves the timeline and the per-thread bars as one PNG.

    .venv/bin/python tools/view_screenshot.py [docs/view-timeline.png]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from abcd_daemon.web.source import LocalSource  # noqa: E402
from tests.web.support import (REAL_SESSION, ROOT, Served, browser_or_skip,  # noqa: E402
                               make_home, store_real)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/view-timeline.png")
    with tempfile.TemporaryDirectory(prefix="abcd-shot-") as tmp:
        home = make_home(Path(tmp))
        store_real(home)
        served = Served(LocalSource(home))
        browser = browser_or_skip()
        try:
            browser.set_window_size(1320, 1600)
            browser.get(served.at(f"/r/{ROOT}/s/{REAL_SESSION}"))
            pictures = browser.find_element("css selector", "section.pictures")
            out.write_bytes(pictures.screenshot_as_png)
        finally:
            browser.quit()
            served.stop()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
