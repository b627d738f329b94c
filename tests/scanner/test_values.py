"""The value gate: secrets next to secret-ish names are masked, their look-alikes are not."""

from __future__ import annotations

import pytest

from abcd_daemon.scanner.values import already_masked, is_placeholder, looks_secret


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
