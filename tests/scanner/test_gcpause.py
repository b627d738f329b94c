"""The collector is paused while a transcript is redacted, and always given back."""

from __future__ import annotations

import gc
import threading

import pytest

from abcd_daemon.gcpause import paused


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_back_on_after_even_on_an_exception():
    with pytest.raises(ValueError):
        with paused():
            assert not gc.isenabled()
            raise ValueError("a refusal")
    assert gc.isenabled()


def test_overlapping_users_in_threads_turn_it_back_on_only_when_the_last_leaves():
    inside, leave = threading.Event(), threading.Event()

    def other():
        with paused():
            inside.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    with paused():
        t.start()
        assert inside.wait(10)
    assert not gc.isenabled(), "the other thread is still redacting"
    leave.set()
    t.join(10)
    assert gc.isenabled()


def test_a_caller_that_had_disabled_the_collector_keeps_it_disabled():
    gc.disable()
    with paused():
        pass
    assert not gc.isenabled()


def test_redacting_gives_the_collector_back_even_when_it_refuses():
    from abcd_daemon.errors import DegradedScanner
    from abcd_daemon.scanner import build_scanner, probe_identity, redact_text

    scanner = build_scanner(probe_identity(None))
    redact_text(scanner, b"password=Zq8mR2kW4xT7\n")
    assert gc.isenabled()
    scanner.degraded = "a broken rule"
    with pytest.raises(DegradedScanner):
        redact_text(scanner, b"x\n")
    assert gc.isenabled()
