"""Artefact Markdown → HTML keeps the containment invariant: nothing a participant
wrote becomes markup, and no text can make the page fetch anything."""

from __future__ import annotations

from abcd_daemon.reconstruct.fence import cell, fence, label
from abcd_daemon.web.markdown import to_html

HOSTILE = ("<script>alert(1)</script>\n## Agent `x`\n```\ninner\n```\n"
           "![i](http://198.51.100.7/a.png) <img src=http://198.51.100.7/b> [l](javascript:x)\n")


def test_fenced_content_renders_escaped_whatever_it_holds():
    out = to_html("### Turn 1 — user\n\n" + fence(HOSTILE))
    assert out.count("<pre>") == 1 and "<h2>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "<script" not in out
    assert "## Agent `x`" in out and "```" in out


def test_no_text_outside_a_fence_becomes_a_link_an_image_or_html():
    out = to_html("- type: " + label(HOSTILE.replace("\n", " ")) + "\n\n<b>raw</b> <https://example.com>\n")
    for element in ("<img", "<a ", "<script", "<b>"):
        assert element not in out, element
    assert "&lt;b&gt;raw&lt;/b&gt;" in out


def test_the_timeline_table_renders_as_a_table():
    out = to_html("| agent | tokens |\n|---|---:|\n| `a1` | 5 |\n")
    assert "<table>" in out and "<code>a1</code>" in out


LABELS = ("**bold** *it* _under_ `code` ~~gone~~", "a\\*b\\_c \\\\ [x] &amp; &#42;",
          "my_repo/_private_/file_name.py", "__init__ ***x*** `` a ` b ``")


def test_a_label_outside_a_fence_renders_as_the_text_it_was_never_emphasis_or_code():
    import html
    import re

    for value in LABELS:
        for line in (f"- type: {label(value)}\n", f"| a | b |\n|---|---|\n| {cell(value)} | x |\n",
                     f"### Turn 2 — assistant · {label(value)}\n"):
            out = to_html(line)
            assert not re.search(r"<(em|strong|code|del|s)>", out), (value, out)
            assert value in html.unescape(re.sub(r"<[^>]+>", "", out)), (value, out)
