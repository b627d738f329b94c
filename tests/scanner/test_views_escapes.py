"""Decoded views map back to whole raw units; escape-unit alignment and boundaries."""

from __future__ import annotations

import pytest

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.escapes import align_to_units, boundary_before, string_spans
from abcd_daemon.scanner.views import json_layer, percent_layer, views_for


def test_a_json_layer_maps_view_spans_to_whole_escape_units():
    raw = b'a\\nb\\u0067hp\\"c'
    view = json_layer(raw, base=100)
    assert view.text == b'a\nbghp"c'
    i = view.text.index(b"ghp")
    assert view.raw_span(i, i + 3) == (100 + 4, 100 + 12)  # \u0067 + "hp"
    assert view.raw_span(1, 2) == (101, 103)  # the \n unit


def test_surrogate_pairs_decode_together_and_lone_ones_are_kept():
    assert json_layer(b"\\ud83d\\ude00").text == "\U0001f600".encode()
    assert json_layer(b"x\\ud83dy") is None  # a lone surrogate is kept: nothing decodes
    assert json_layer(b"x\\ud83d\\n").text == b"x\\ud83d\n"


def test_layers_compose_back_to_the_raw_text():
    raw = b'{"t":"{\\"k\\":\\"\\\\u0067hp_x\\"}"}'
    views = list(views_for(raw))
    deepest = [v for v in views if b"ghp_x" in v.text][0]
    i = deepest.text.index(b"ghp_x")
    s, e = deepest.raw_span(i, i + 5)
    assert raw[s:e] == b"\\\\u0067hp_x"


def test_percent_view_and_its_json_composition():
    assert percent_layer(b"a%40b").text == b"a@b"
    kinds = [v.text for v in views_for(b"%5Cu0040")]
    assert b"\\u0040" in kinds and b"@" in kinds


@pytest.mark.parametrize(
    "raw, span, expected",
    [
        (b'ab\\"cd', (3, 5), (2, 5)),  # starts on an escaped quote: take its backslash
        (b"ab\\u0067cd", (4, 8), (2, 8)),  # starts inside \u0067
        (b"ab\\u0067cd", (2, 5), (2, 8)),  # ends inside \u0067
        (b"ab\\\\cd", (2, 3), (2, 4)),  # ends on a backslash that escapes the next
        (b"a%40b", (2, 4), (1, 4)),
        (b"\\ud83d\\ude00x", (6, 13), (0, 13)),  # half a surrogate pair takes both
        (b"plain text", (2, 5), (2, 5)),
    ],
)
def test_align_to_units_widens_to_whole_units(raw, span, expected):
    assert align_to_units(raw, *span) == expected


def test_boundary_before_reads_escapes():
    assert boundary_before(b"\\nghp", 2)
    assert boundary_before(b"\\u3002ghp", 6)
    assert not boundary_before(b"\\u0061ghp", 6)  # \u0061 is 'a': a word byte
    assert not boundary_before(b"xghp", 1)
    assert boundary_before(b"%20ghp", 3) and not boundary_before(b"%41ghp", 3)


def test_string_spans_find_json_strings():
    line = b'{"a": "x\\"y", "b": 1}'
    assert [line[s:e] for s, e in string_spans(line)] == [b'"a"', b'"x\\"y"', b'"b"']


def test_empty_input_is_fine(scanner):
    out = redact_text(scanner, b"")
    assert (out.text, out.secrets, out.home_paths, out.kinds) == (b"", 0, 0, {})
