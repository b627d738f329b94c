"""One rule's matches in one window (``scanner.matching``): the span a finding gets,
and the vetoes that keep text from being one."""

from __future__ import annotations

from abcd_daemon.scanner.checks import Context
from abcd_daemon.scanner.compiled import Compiled
from abcd_daemon.scanner.generic import GENERIC_RULES
from abcd_daemon.scanner.matching import line_matches, try_hit

RULES = {r.name: r for r in GENERIC_RULES}
VALUE = b"Zq8mR2kW4xT7pL9s"


def _found(rule: str, buf: bytes, ls: int = 0, le: int | None = None, ends=None, rank: int = 5):
    out: list = []
    line_matches(Compiled(RULES[rule]), 0, buf, ls, len(buf) if le is None else le, out,
                 {} if ends is None else ends, Context(), rank)
    return [buf[s:e] for s, e, _, _ in out]


def test_the_masked_span_is_the_value_not_the_name():
    assert _found("secret_flag", b"deploy --api-token " + VALUE + b" now") == [VALUE]


def test_a_value_the_window_cut_is_taken_to_its_line_end():
    buf = b"deploy --api-token " + VALUE + b"\nnext line"
    cut = buf.index(VALUE) + 8  # the window ends inside the value
    assert _found("secret_flag", buf, le=cut) == [VALUE]


def test_a_rejected_value_is_searched_again_from_where_it_starts():
    # ``-storepass`` is first read as the value of ``-genkey`` (a flag is no value),
    # then it opens the match that holds the password.
    assert _found("secret_flag", b"keytool -genkey -storepass " + VALUE) == [VALUE]


def test_masked_text_and_placeholders_are_not_findings():
    assert _found("secret_flag", b"deploy --api-token ****************") == []
    assert _found("secret_flag", b"deploy --api-token <your-api-token>") == []
    assert _found("secret_flag", b"deploy --api-token ${API_TOKEN}") == []


def test_a_span_a_better_ranked_rule_took_is_not_found_again():
    buf = b"deploy --api-token " + VALUE
    s = buf.index(VALUE)
    taken = {s + len(VALUE): (s, 0)}  # the same bytes, by a rule of rank 0
    assert _found("secret_flag", buf, ends=taken, rank=5) == []
    assert _found("secret_flag", buf, ends=taken, rank=0) == [VALUE]  # (a tie is still checked)


def test_a_hit_gets_the_match_that_contains_it_or_none():
    c = Compiled(RULES["bearer_token"])
    token = b"eyJraWQiOiJhYmMiLCJhbGciOiJIUzI1NiJ9xyzQ"
    buf = b"curl -H 'Authorization: Bearer " + token + b"'"
    hit = buf.lower().index(b"bearer ")
    m, span = try_hit(c, buf, hit, hit, len(buf), len(buf), Context(), {}, 5)
    assert buf[span[0]:span[1]] == token
    words = b"a bearer token is required"
    hit = words.index(b"bearer ")
    assert try_hit(c, words, hit, hit, len(words), len(words), Context(), {}, 5) == (None, 0)
