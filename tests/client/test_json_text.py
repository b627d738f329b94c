"""``json_text`` prints a decoded reply byte for byte as ``output.emit_json`` prints the
value the daemon encoded: every code point, every way msgspec writes a number, nested
empty containers, sorted keys — so a served ``abcd search --json`` (no msgspec in the
process) and an in-process one print the same document."""

from __future__ import annotations

import math
import os

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from abcd_client import json_text, output


def _printed(capsys, emit, value) -> str:
    emit(value)
    return capsys.readouterr().out


def _served_form(value):
    """``value`` as the served path holds it: encoded by msgspec (the daemon), decoded here."""
    return json_text.loads(msgspec.json.encode(value))


EVERY_CODE_POINT = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
NUMBERS = [0.0, -0.0, 0.1, -2.5, 1e-5, 1e-7, 5e-324, 1e16, 1e21, 1e22, 1.5e300, 123456789012345680.0,
           -12.345678901234567, 2**64 - 1, -(2**63), 0, -1]


def test_every_code_point_and_number_form_prints_as_emit_json_prints_it(capsys):
    value = {"z": EVERY_CODE_POINT, "numbers": NUMBERS, "nested": [[], {}, [{}], {"a": [None, True, False]}],
             "é": 3, "B": "\u2028\u2029\x7f\x00\x1f\"\\", EVERY_CODE_POINT[:40]: "key of control characters"}
    want = _printed(capsys, output.emit_json, value)
    assert _printed(capsys, output.emit_decoded, _served_form(value)) == want
    assert "1e-7" in want and "0.00001" in want  # msgspec's spelling, not Python's repr


_leaf = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
         | st.floats(allow_nan=False, allow_infinity=False) | st.text())
_values = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                       max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_json_value_prints_as_emit_json_prints_it(value):
    import io
    import sys

    printed = []
    for emit, v in ((output.emit_json, value), (output.emit_decoded, _served_form(value))):
        old, sys.stdout = sys.stdout, io.StringIO()
        try:
            emit(v)
            printed.append(sys.stdout.getvalue())
        finally:
            sys.stdout = old
    assert printed[0] == printed[1]


def test_a_number_keeps_its_text_and_is_not_home_folded(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    decoded = _served_form({"path": os.path.join(str(tmp_path), "x"), "score": -1e-7})
    assert decoded["score"] == json_text.Number("-1e-7") and float(decoded["score"]) == -1e-7
    assert _printed(capsys, output.emit_decoded, decoded) == '{\n  "path": "~/x",\n  "score": -1e-7\n}\n'


def test_a_non_finite_number_prints_as_null_as_emit_json_prints_it(capsys):
    value = {"inf": math.inf, "nan": math.nan}
    assert _printed(capsys, output.emit_decoded, _served_form(value)) == _printed(capsys, output.emit_json, value)


@pytest.mark.parametrize("value, named", [({"x": 1.5}, "float"), ({"x": {1, 2}}, "set"), ({1: "a"}, "int")])
def test_a_value_that_json_text_did_not_decode_is_refused_by_type(value, named):
    with pytest.raises(TypeError, match=named):
        json_text.dumps(value)


def test_text_that_is_not_json_raises_value_error():
    with pytest.raises(ValueError):
        json_text.loads(b'{"op": ')
