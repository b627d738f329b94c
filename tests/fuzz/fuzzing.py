"""The one way a fuzz property is declared, so CI and ``bench/fuzz.py`` run the same thing.

``@fuzz(strategy, examples=N)`` turns ``def test_x(case): ...`` into a hypothesis test
with a bounded CI budget (``N`` examples, no deadline) and keeps the undecorated
property and its strategy on the test (``fuzz_property``, ``fuzz_strategy``), so
``bench/fuzz.py`` can run the very same property with a far larger budget. A test
marked ``xfail`` (a known product bug) is reported by the bench as a known failure,
not as a new one.

Also here: strategies several properties share (arbitrary JSON values, nesting bombs).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

#: Health checks that only say "this generator makes large or slow inputs" — which is
#: the point here.
SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
              HealthCheck.filter_too_much]


def fuzz(strategy, *, examples: int = 100, shrink: bool = True):
    """Declare a property test: ``test(case)`` for ``case`` drawn from ``strategy``.

    ``shrink=False`` is for a test pinned ``xfail`` on a known bug: CI then stops at the
    first failing example instead of spending seconds shrinking it on every run."""

    def decorate(prop):
        phases = [p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)]
        test = settings(max_examples=examples, deadline=None, phases=phases,
                        suppress_health_check=SUPPRESSED)(given(strategy)(prop))
        test.fuzz_property = prop
        test.fuzz_strategy = strategy
        test.fuzz_examples = examples
        return test

    return decorate


# --------------------------------------------------------------------------- JSON values

#: Integers a JSON producer may write, far past int64 on both sides.
json_ints = st.one_of(st.integers(-5, 5), st.integers(-(2**70), 2**70),
                      st.sampled_from([2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**12, 10**12 + 1]))
json_floats = st.floats(allow_nan=False, allow_infinity=False)
#: Text without lone surrogates (JSON encoders escape them; readers repair them).
json_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)
json_scalars = st.one_of(st.none(), st.booleans(), json_ints, json_floats, json_text)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(json_text, inner, max_size=4)),
    max_leaves=12,
)


def dumps(value) -> str:
    """Compact JSON, non-ASCII kept (as harnesses write it)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


#: Depths around and far past the decoders' recursion limit (msgspec gives up near 1000).
bomb_depths = st.one_of(st.integers(900, 1100), st.integers(1100, 20_000))


def nesting_bomb(depth: int, opener: str = "[") -> str:
    """A JSON value nested ``depth`` levels deep, syntactically complete."""
    closer = {"[": "]", "{": "}"}[opener]
    if opener == "{":
        return '{"a":' * depth + "0" + "}" * depth
    return opener * depth + closer * depth


# --------------------------------------------------------------------------- RFC 3339 times

def _part(valid: tuple[int, int], edges=()):
    """Mostly in the calendar's range (so the date is real), sometimes anywhere."""
    return st.one_of(st.integers(*valid), st.sampled_from([valid[0], valid[1], *edges]),
                     st.integers(0, 99))


_offset = st.one_of(st.sampled_from(["Z", "z", "+00:00", "-23:59", "+23:59", "+99:99", "-99:99"]),
                   st.builds(lambda sign, hh, mm: f"{sign}{hh:02d}:{mm:02d}",
                             st.sampled_from("+-"), st.integers(0, 99), st.integers(0, 99)))
rfc3339_shaped = st.one_of(
    # the first and last instants the calendar holds, under any offset
    st.builds(lambda edge, tz: edge + tz,
              st.sampled_from(["0001-01-01T00:00:00", "9999-12-31T23:59:59.999999999"]), _offset),
    st.builds(
        lambda y, mo, d, h, mi, s, frac, tz:
            f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{tz}",
        st.one_of(st.integers(0, 9999), st.sampled_from([0, 1, 2, 1969, 1970, 9998, 9999])),
        _part((1, 12), (0, 13)), _part((1, 28), (0, 29, 30, 31, 32)), _part((0, 23), (24,)),
        _part((0, 59), (60,)), _part((0, 59), (60,)),
        st.one_of(st.just(""), st.integers(1, 999_999_999).map(lambda n: f".{n}")), _offset),
)
