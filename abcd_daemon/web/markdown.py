"""Artefact Markdown → HTML, with the containment invariant carried into HTML.

Invariant 7 (DESIGN §5) says everything a participant wrote sits inside a fence. In
HTML that becomes: nothing a participant wrote becomes markup. The renderer is
markdown-it-py (CommonMark, maintained by the Executable Books project), configured so
that the parser itself cannot produce anything that acts:

- ``html`` is off: a ``<script>`` or ``<img>`` anywhere, fenced or not, is text;
- the ``link``, ``image``, ``autolink`` and ``linkify`` rules are off: no element with a
  URL can come out of any text, so no page can make a request a transcript chose;
- a fence renders as ``<pre><code>`` with its content escaped, whatever it holds —
  forged headings, markers and inner fences included; the info string is abcd's own.

What remains outside fences is abcd's own text and its labels
(:func:`abcd_daemon.reconstruct.fence.label`), whose Markdown punctuation the artefact
already escapes: a label renders as the text it was, never emphasis or a code span.
Tables are on (the agent timeline).
Measured against mistune and Python-Markdown in ``docs/architecture.md``.

Pure; :func:`to_html` never raises on any text.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.disable(["link", "image", "autolink", "html_inline", "html_block"])
    return md


def to_html(text: str) -> str:
    """The HTML of the Markdown ``text`` (see the module docstring)."""
    return _parser().render(text)


def warm() -> None:
    """Build the parser now (about 10 ms), so the first page does not pay for it."""
    _parser()
