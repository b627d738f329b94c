"""The value gate: secrets next to secret-ish names are masked, their look-alikes are not."""

from __future__ import annotations

import random

import pytest

from abcd_daemon.scanner.values import already_masked, class_profile, is_placeholder, looks_secret, random_letters


@pytest.mark.parametrize("value", [b"hunter2-Xk29!q", b"Zq8XvT2mLw9RkP4sYb7NcH1dGf6JaE3uWo5KiQ0y",
                                   b"3f2a9c1e77b04d5e9a1b2c3d4e5f6a7b8c9d0e1f", b"Tr0ub4dor&3x"])
def test_random_and_password_shaped_values_are_secrets(value):
    assert looks_secret(value)


@pytest.mark.parametrize("value", [b"strict", b"1024", b"2024-01-01", b"true", b"~/.config/token",
                                   b"os.environ", b"getApiKey()", b"SECRET_KEY_NAME", b"${API_KEY}",
                                   b"your_api_key_here", b"<your-token>", b"xxxxxxxxxxxxxxxx", b"changeme",
                                   b"AKIAIOSFODNN7EXAMPLE", b"https://example.com/x"])
def test_words_numbers_paths_references_and_placeholders_are_not(value):
    assert not looks_secret(value)


def test_the_seal_and_stars_read_as_masked():
    assert already_masked(b"*" * 12)
    assert already_masked(b"glp*****************J0")
    assert not already_masked(b"glpat-a1B2c3D4e5F6g7H8")


def test_documented_example_keys_are_placeholders():
    assert is_placeholder(b"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert is_placeholder(b"0000000000000000")
    assert not is_placeholder(b"Zq8XvT2mLw9RkP4sYb7NcH1dGf6JaE3uWo5KiQ0y")


def test_a_value_that_says_it_is_fake_is_a_placeholder():
    assert is_placeholder(b"somefakekey") and is_placeholder(b"sk_test_FAKE_Zq8XvT2mLw9RkP4s")


def _profile_byte_by_byte(v: bytes) -> tuple[int, int, int, int]:
    """The definition :func:`class_profile` must agree with, one byte at a time."""
    upper = sum(65 <= b <= 90 for b in v)
    lower = sum(97 <= b <= 122 for b in v)
    digits = sum(48 <= b <= 57 for b in v)
    runs, prev = 0, None
    for b in v:
        cls = 0 if 65 <= b <= 90 else 1 if 97 <= b <= 122 else 2 if 48 <= b <= 57 else 3
        if cls != prev:
            runs, prev = runs + 1, cls
    return upper, lower, digits, runs


def test_class_profile_counts_cases_digits_and_class_runs_of_any_bytes():
    rng = random.Random(7)
    alphabet = b"aZ09_-+/.=\x00\xff\n" + bytes(range(256))
    for _ in range(3000):
        v = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert class_profile(v) == _profile_byte_by_byte(v), v
    assert class_profile(b"ab12CD") == (2, 2, 2, 3)
    assert class_profile(b"") == (0, 0, 0, 0)


@pytest.mark.parametrize("value", [b"YfKlcxDMPYIyOZcN", b"LtxqmvBhiJaTUy", b"qWeRtYuIoPaS"])
def test_a_random_password_of_letters_only_is_a_secret(value):
    assert random_letters(value)
    assert looks_secret(value)


@pytest.mark.parametrize("value", [b"getPasswordFromEnv", b"ApiTokenValue", b"XMLHttpRequestFactory",
                                   b"DatabasePassword", b"abcdefghijklmn", b"ABCDEFGHIJKLMN", b"YfKlcxDMPY1"])
def test_words_and_identifiers_of_letters_are_not_random_letters(value):
    assert not random_letters(value)


def test_a_value_glued_to_a_client_flag_is_judged_without_the_shape_gate():
    assert looks_secret(b"CorrectHorseBattery", 4, shape=False)
    assert not looks_secret(b"CorrectHorseBattery", 4)  # words, to the shape gate
    for passed in (b"5432", b"$MYSQL_PWD", b"${DB_PASSWORD}", b"xxxx", b"<password>"):
        assert not looks_secret(passed, 4, shape=False), passed
