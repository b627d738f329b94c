"""The one fenced writer, and its inline sibling: how transcript content is contained.

Invariant 7 (DESIGN §5): everything inside a fence is something somebody said;
everything outside one is this document. Every block of content — plain text included —
goes through :func:`fence`, and every non-literal scalar shown outside a fence goes
through :func:`label` or :func:`code` (which apply :func:`~abcd_daemon.termsafe.clean_line`
first). One mechanism everywhere: a per-type judgement about which content is dangerous
is the thing that drifts.

Rules (reference §6.4):
- A fence is a run of backticks one longer than the longest backtick run inside the
  content, and never shorter than three, so content carrying its own fences cannot close
  the block that holds it. The content is newline-terminated; the closing fence stands
  on its own line.
- An inline code span uses a delimiter one longer than the longest backtick run inside,
  padded with a space when the content starts or ends with a backtick (or is empty).
- Labels are single lines capped at :data:`MAX_LABEL_BYTES`, their Markdown
  punctuation backslash-escaped (a label is text in any renderer, never emphasis or a
  code span); table cells additionally escape ``|``.

Pure; never raises.
"""

from __future__ import annotations

import re

from ..termsafe import clean_line

#: The cap on one label outside a fence (reference §6.4, ``maxLabelBytes``).
MAX_LABEL_BYTES = 512

def longest_backtick_run(text: str, floor: int = 0) -> int:
    """The length of the longest run of consecutive backticks in ``text`` (0 if none),
    or ``floor`` when no run is longer than ``floor``. Searches for ever longer runs
    (each a fast substring search) instead of listing every run: real content rarely
    holds a run longer than three."""
    n = floor
    run = "`" * (n + 1)
    while run in text:
        n += 1
        run += "`"
    return n


def fence(content: str, lang: str = "") -> str:
    """``content`` as one fenced block, ending in a newline. ``lang`` is this
    document's own info string (``json`` or empty), never transcript text."""
    return "".join(fenced(content, lang))


def fenced(content: str, lang: str = "") -> tuple[str, str, str]:
    """:func:`fence` in three pieces — the opening fence line, ``content`` itself (never
    copied), the closing fence line (after a newline when ``content`` lacks its own) —
    for a writer that must not build a second copy of a long text."""
    if "`" not in content or "```" not in content:  # nearly always: the shortest fence
        return _OPEN.get(lang) or f"```{lang}\n", content, (
            "```\n" if content.endswith("\n") else "\n```\n")
    ticks = "`" * (longest_backtick_run(content, 3) + 1)
    close = f"{ticks}\n" if content.endswith("\n") else f"\n{ticks}\n"
    return f"{ticks}{lang}\n", content, close


_OPEN = {"": "```\n", "json": "```json\n"}


def plain(value: str) -> str:
    """``value`` as one safe line, not escaped (what a code span holds): controls, bidi
    and zero-width characters masked, HTML openers and ``](`` broken, capped."""
    if (len(value) <= MAX_LABEL_BYTES and value.isascii() and value.isprintable()
            and "<" not in value and "](" not in value):
        return value  # what clean_line would return, without its work (ids, names)
    return clean_line(value, MAX_LABEL_BYTES)


#: What could turn a label's text into inline markup: emphasis, strikethrough, code
#: spans, link brackets, entity references, backslash escapes themselves — and an
#: underscore that is not between two letters or digits (one inside a word, as in
#: ``my_repo``, can neither open nor close emphasis, so it stays as written).
_INLINE = re.compile(r"[\\`*~\[\]&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_PUNCTUATION = frozenset("\\`*~[]&_")


def label(value: str) -> str:
    """A non-literal scalar made safe to print outside a fence: one safe line
    (:func:`plain`) whose Markdown punctuation is backslash-escaped, so in any renderer
    it stays the text it was — ``*x*`` is not emphasis, ```` `x` ```` not code — still
    within :data:`MAX_LABEL_BYTES` (the text is cut shorter, ``…`` marking the cut,
    when its escapes would not fit; never inside an escape)."""
    text = plain(value)
    if _PUNCTUATION.isdisjoint(text):
        return text  # ids, names, types: nothing to escape, no regex run
    escaped = _INLINE.sub(lambda m: "\\" + m.group(), text)
    if len(escaped.encode("utf-8")) <= MAX_LABEL_BYTES:
        return escaped
    if text.endswith("…"):
        text = text[:-1]
    while len(escaped.encode("utf-8")) > MAX_LABEL_BYTES - 3:  # room for the "…"
        text = text[:max(0, len(text) - max(1, (len(escaped.encode("utf-8")) - MAX_LABEL_BYTES + 3) // 2))]
        escaped = _INLINE.sub(lambda m: "\\" + m.group(), text)
    return escaped + "…"


def code(value: str) -> str:
    """``value`` as an inline code span (after :func:`plain`: a code span shows its
    content literally, escapes included); the delimiter is longer than any backtick
    run inside, so the span cannot be closed from within."""
    if (value and len(value) <= MAX_LABEL_BYTES and value.isascii() and value.isprintable()
            and "`" not in value and "<" not in value and "](" not in value):
        return f"`{value}`"  # what the rest gives such a value (an id, a name), sooner
    text = plain(value)
    ticks = "`" * (longest_backtick_run(text) + 1)
    if not text or text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    return f"{ticks}{text}{ticks}"


def cell(value: str) -> str:
    """``value`` as a table cell: :func:`label`, then ``|`` escaped so a cell cannot
    add a column."""
    return label(value).replace("|", "\\|")


def code_cell(value: str) -> str:
    """``value`` as an inline code span inside a table cell (``|`` escaped)."""
    return code(value).replace("|", "\\|")
