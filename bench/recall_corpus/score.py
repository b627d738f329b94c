"""Judging a redactor's output line against the example placed in it.

A positive is *caught* iff no run of 8 consecutive characters of its distinctive
body (the secret without its documented prefix/suffix; the whole body if it is
shorter) survives in the output line, in any encoding: raw, JSON-escaped once,
twice or three times, percent-encoded (``quote`` and ``quote_plus``), and also in
any decoded view of the line (every JSON string in it, recursively parsing
strings that are JSON documents, and percent-decoding those with ``%``).

A negative is *kept* iff its anchor (the near-miss string, widened within its
line of ``text`` to at least 12 characters, so that a short value such as ``3``
or ``true`` is looked for beside its name) occurs in the output's decoded views
as many times as in the input's: masking any occurrence is a false positive.
"""

from __future__ import annotations

import json
import urllib.parse

from .example import Example

WINDOW = 8
ANCHOR = 12


def views(line: str, raw: bool = True) -> str:
    """Every string value ``line`` holds, decoded (JSON in JSON, percent encoding),
    plus (``raw``) the line itself, joined with NULs into one haystack. A line that
    is not JSON is its own only view."""
    out = [line] if raw else []
    try:
        stack = [json.loads(line)]
    except ValueError:
        return line
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str):
            out.append(x)
            if "%" in x:
                out.append(urllib.parse.unquote(x))
            if x[:1] in "{[":
                try:
                    stack.append(json.loads(x))
                except ValueError:
                    pass
    return "\0".join(out)


def _encodings(w: str) -> set[str]:
    j1 = json.dumps(w)[1:-1]
    j2 = json.dumps(j1)[1:-1]
    j3 = json.dumps(j2)[1:-1]
    return {w, j1, j2, j3, urllib.parse.quote(w, safe=""), urllib.parse.quote_plus(w),
            urllib.parse.quote(w, safe="/:")}


def windows(body: str) -> list[str]:
    if len(body) <= WINDOW:
        return [body]
    return [body[i:i + WINDOW] for i in range(len(body) - WINDOW + 1)]


def survives(example: Example, out_line: str) -> bool:
    """True iff a run of the example's secret body survives in ``out_line``."""
    hay = views(out_line)
    body = example.body
    if body in hay:
        return True
    for w in windows(body):
        for enc in _encodings(w):
            if enc in hay:
                return True
    return False


def anchor(near: str, text: str) -> str:
    """``near`` widened within its line of ``text`` (left first, then right) to at
    least :data:`ANCHOR` characters."""
    i = text.find(near)
    j = i + len(near)
    if i < 0 or j - i >= ANCHOR:
        return near
    line_start = text.rfind("\n", 0, i) + 1
    line_end = text.find("\n", j)
    line_end = len(text) if line_end < 0 else line_end
    start = max(line_start, j - ANCHOR)
    end = min(line_end, start + ANCHOR) if j - start < ANCHOR else j
    return text[start:max(end, j)]


def kept(example: Example, context: str, in_line: str, out_line: str) -> bool:
    """True iff every occurrence of the negative's anchor (in the string placed in
    ``context``) survived from ``in_line`` to ``out_line``."""
    source = example.env_line if context == "env_file" and example.env_line else example.text
    a = anchor(example.secret, source)
    before = views(in_line, raw=False).count(a)
    if not before:  # cannot happen for a placed example; never pass a negative vacuously
        raise ValueError(f"{example.family}: anchor not found in its {context} line")
    return views(out_line, raw=False).count(a) >= before


def is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True
