"""JSON text as abcd prints it, with the standard library only: :func:`loads` keeps
every number exactly as it was written, and :func:`dumps` writes a decoded value in
the one style every ``--json`` document has (:func:`abcd_client.output.emit_json`:
msgspec's encoder with sorted keys, formatted with a 2-space indent).

For a verb that speaks the daemon's JSON wire (:mod:`.json_client`) and must not import
msgspec: the daemon encodes its reply with msgspec, so a number kept as its text is
already written the way ``emit_json`` would write it (Python's ``repr`` is not: msgspec
writes ``1e-7`` and ``0.00001`` where Python writes ``1e-07`` and ``1e-05``), and a
string is escaped the same by both (``tests/client/test_json_text.py`` pins the two
byte for byte, every code point included).
"""

from __future__ import annotations

import json
TYPE_CHECKING = False  # typing itself is a served verb's millisecond
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Number", "dumps", "loads"]

_string = json.encoder.encode_basestring  # the C escaper json.dumps(ensure_ascii=False) uses


class Number:
    """A JSON number that is not an integer, as its text. (Not a ``str``: a home-folding
    or string-escaping pass over a value must leave it alone.)"""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __float__(self) -> float:
        return float(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Number({self.text!r})"


def loads(text: str | bytes) -> Any:
    """``text`` decoded: objects as dicts, arrays as lists, integers as ints, every other
    number as a :class:`Number`. Raises ``ValueError`` on text that is not JSON."""
    return json.loads(text, parse_float=Number)


def dumps(value: Any) -> str:
    """``value`` (what :func:`loads` returns: dict, list, str, int, bool, None,
    :class:`Number`) as ``emit_json`` would print it, without the final newline."""
    out: list[str] = []
    _write(value, "", out)
    return "".join(out)


def _write(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, Number):
        out.append(value.text)
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{\n")
        for i, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"a JSON object's key must be a string, not {type(key).__name__}")
            out.append(f",\n{inner}" if i else inner)
            out.append(_string(key))
            out.append(": ")
            _write(value[key], inner, out)
        out.append(f"\n{indent}}}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(f",\n{inner}" if i else inner)
            _write(item, inner, out)
        out.append(f"\n{indent}]")
    else:
        raise TypeError(f"not a decoded JSON value: {type(value).__name__}")
