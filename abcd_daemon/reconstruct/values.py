"""Values read from source fields: sortable times and token counts.

- A time is kept as a sortable key ``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn`` (UTC) so keys compare
  as the times they name; ``""`` means "no usable time".
- A token count is an int in 0..10^12; anything else (a forged or broken field, a wrong
  type, NaN) reads as 0, so no sum can overflow the telemetry's integers.

Pure; never raises.
"""

from __future__ import annotations

import re

from ..store.record import format_rfc3339_ns, parse_rfc3339_ns

Usage = tuple[int, int, int, int]  # input, output, cache_creation, cache_read

_ZULU = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z")
#: :data:`_ZULU` with the ranges :func:`when_key` checks (month, day, hour, minute,
#: second) in the pattern: one match for the common case.
#: ASCII digits only there: any other digit takes the general path, as before.
_VALID_ZULU = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
                         r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.\d{1,9})?Z")


def _zulu_key(stamp: str) -> str:
    return stamp[:19] + (stamp[19:-1] or ".").ljust(10, "0")


#: :data:`_VALID_ZULU` up to the seconds, and which such heads it matched (a few
#: thousand kept: a transcript's lines share their seconds often).
_VALID_SECONDS = re.compile(_VALID_ZULU.pattern[:_VALID_ZULU.pattern.index("(?:\\.")])
_SECONDS: dict[str, bool] = {}


def when_key(stamp: object) -> str:
    """A sortable key ``YYYY-MM-DDTHH:MM:SS.nnnnnnnnn`` (UTC) for an RFC 3339 time, or
    ``""`` when ``stamp`` is not one. Keys compare as the times they name."""
    if not isinstance(stamp, str):
        return ""
    if 21 <= len(stamp) <= 29 and stamp[19] == "." and stamp[-1] == "Z":
        # :data:`_VALID_ZULU` with a fraction, its head's match remembered
        head = stamp[:19]
        valid = _SECONDS.get(head)
        if valid is None:
            if len(_SECONDS) >= 4096:
                _SECONDS.clear()
            valid = _SECONDS[head] = _VALID_SECONDS.fullmatch(head) is not None
        fraction = stamp[20:-1]
        if valid and fraction.isdecimal():  # what \d matches: Unicode category Nd
            return head + "." + fraction.ljust(9, "0")
    if _VALID_ZULU.fullmatch(stamp):
        return stamp[:19] + (stamp[19:-1] or ".").ljust(10, "0")
    if _ZULU.fullmatch(stamp):
        if ("01" <= stamp[5:7] <= "12" and "01" <= stamp[8:10] <= "31"
                and stamp[11:13] <= "23" and stamp[14:16] <= "59" and stamp[17:19] <= "60"):
            return _zulu_key(stamp)
        return ""
    try:
        return _zulu_key(format_rfc3339_ns(parse_rfc3339_ns(stamp)))
    except (ValueError, OverflowError, OSError):
        return ""


def when_ns(key: str) -> int:
    """Nanoseconds since the epoch for a :func:`when_key` (0 for ``""``)."""
    if not key:
        return 0
    try:
        return parse_rfc3339_ns(key + "Z")
    except (ValueError, OverflowError):
        return 0


def when_label(key: str) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` for a :func:`when_key` (``""`` for ``""``)."""
    return key[:19] + "Z" if key else ""


#: A count above this is not a token count a response could carry (a forged or broken
#: field): it reads as 0, so no sum can overflow the telemetry's integers.
_MAX_TOKENS = 10**12


def _as_int(value: object) -> int:
    """A token count from a source field: an int in 0..10^12, anything else 0."""
    if type(value) is int:
        return value if 0 < value <= _MAX_TOKENS else 0
    if isinstance(value, float) and 0 < value <= _MAX_TOKENS:  # NaN fails both tests
        return int(value)
    return 0


def usage_of(input_tokens: object, output_tokens: object, cache_creation: object,
             cache_read: object) -> Usage:
    """Normalise four source fields into a :data:`Usage` tuple."""
    if (type(input_tokens) is int and type(output_tokens) is int and type(cache_creation) is int
            and type(cache_read) is int and 0 <= input_tokens <= _MAX_TOKENS
            and 0 <= output_tokens <= _MAX_TOKENS and 0 <= cache_creation <= _MAX_TOKENS
            and 0 <= cache_read <= _MAX_TOKENS):  # the usual case: each as it is
        return input_tokens, output_tokens, cache_creation, cache_read
    return (_as_int(input_tokens), _as_int(output_tokens), _as_int(cache_creation),
            _as_int(cache_read))
