"""A secret found once is masked wherever else it is spelled the same (``repeats``)."""

from __future__ import annotations

import json

from abcd_daemon.scanner import redact_text
from abcd_daemon.scanner.repeats import MIN_VALUE, with_repeats

TOKEN = "Zq8mR2kW4xT7pL9sYfQ3vN6b"
#: No upper-case letter: no shape rule takes it bare; only its name says it is secret.
PASSWORD = "k9q2-x7m3-hunter-p4ss"


def _line(text: str, kind: str = "user") -> bytes:
    return json.dumps({"type": kind, "message": {"role": kind, "content": text}}).encode()


def test_a_value_named_on_one_line_is_masked_bare_on_every_other_line(scanner):
    raw = b"\n".join([
        _line(f"$ cat .env\nDB_PASSWORD={PASSWORD}\n"),
        _line("ok"),
        _line(f"then ran: psql -h db.example.com {PASSWORD} and echoed {PASSWORD}.", "assistant"),
    ]) + b"\n"
    assert redact_text(scanner, _line(f"psql -h db.example.com {PASSWORD}")).secrets == 0  # alone: unknown
    out = redact_text(scanner, raw)
    assert PASSWORD.encode() not in out.text
    assert PASSWORD[3:-2].encode() not in out.text  # not even the middle of a sealed copy
    for line in out.text.splitlines():
        json.loads(line)  # every line is still JSON
    rules = [rule for rule, _kind, _line in out.findings]
    assert [(rule, line) for rule, _k, line in out.findings if rule.endswith("/repeat")] == [
        (rules[0] + "/repeat", 3), (rules[0] + "/repeat", 3)]


def test_a_value_inside_a_longer_word_is_masked_there_too(scanner):
    raw = f"PASSWORD={PASSWORD}\nlog: user=admin;pw:{PASSWORD}x;\n".encode()
    out = redact_text(scanner, raw).text
    assert PASSWORD.encode() not in out


def test_a_token_judged_by_shape_alone_is_not_spread_to_ids_sharing_its_bytes(scanner):
    body = "01Xk29qLm7Tz4vBn8RcW1yHs5dQ"
    raw = _line(f"tool_{body} and the id toolu_{body} and msg_{body}") + b"\n"
    out = redact_text(scanner, raw).text
    assert f"toolu_{body}".encode() in out and f"msg_{body}".encode() in out


def test_short_and_blob_sized_values_and_identity_kinds_are_not_searched_for(scanner):
    from abcd_daemon.scanner.compiled import Finding
    from abcd_daemon.scanner.repeats import MAX_VALUE

    blob = b"Zq8mR2kW4x" * (MAX_VALUE // 10 + 1)
    text = b"K=" + blob + b" then " + blob
    long = Finding(2, 2 + len(blob), "secret:assignment", "warn", "secret_assignment")
    assert with_repeats(text, [long]) == [long]

    text = b"pw=abc12345 then abc12345 again; dain@danieldemmel.me and dain@danieldemmel.me"
    short = Finding(3, 11, "secret:password_assignment", "warn", "password_assignment")
    email = Finding(33, 53, "real_email", "hard_fail", "real_email")
    assert 11 - 3 < MIN_VALUE
    assert with_repeats(text, [short, email]) == [short, email]


def test_repeats_come_back_sorted_with_the_rule_marked_and_kind_kept():
    from abcd_daemon.scanner.compiled import Finding

    text = b"later " + TOKEN.encode() + b" first KEY=" + TOKEN.encode() + b" and " + TOKEN.encode()
    at = text.index(b"KEY=") + 4
    f = Finding(at, at + len(TOKEN), "secret:assignment", "warn", "secret_assignment")
    got = with_repeats(text, [f])
    assert [g.start for g in got] == sorted(g.start for g in got)
    assert [(g.rule, g.kind) for g in got] == [("secret_assignment/repeat", "secret:assignment"),
                                               ("secret_assignment", "secret:assignment"),
                                               ("secret_assignment/repeat", "secret:assignment")]
    assert all(text[g.start:g.end] == TOKEN.encode() for g in got)


def test_a_value_named_in_one_batch_is_masked_in_every_later_batch(scanner, tmp_path):
    """Capture and ``abcd redact`` stream a transcript batch by batch: the values one
    batch found are carried to the next ones."""
    import os

    from abcd_daemon.store.stream import redact_plain

    batches = [_line(f"DB_PASSWORD={PASSWORD}") + b"\n", _line("nothing here") + b"\n",
               _line(f"psql -h db.example.com {PASSWORD}") + b"\n"]
    path = tmp_path / "out.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        got = redact_plain(scanner, batches, fd, deadline=None, clock=lambda: 0.0)
    finally:
        os.close(fd)
    out = path.read_bytes()
    assert PASSWORD.encode() not in out and out.count(b"\n") == 3
    assert [(rule.endswith("/repeat"), line) for rule, _k, line in got.findings] == [(False, 1), (True, 3)]


def test_at_most_max_values_are_searched_for_and_every_finding_is_kept(monkeypatch):
    """A batch dense with distinct secrets does not stall compiling them all: past
    ``MAX_VALUES`` a value is masked only where a rule found it."""
    from abcd_daemon.scanner import repeats
    from abcd_daemon.scanner.compiled import Finding

    monkeypatch.setattr(repeats, "MAX_VALUES", 8)
    values = [f"Secret{i:04d}xyzQ" for i in range(12)]
    text = (" ".join(f"KEY={v}" for v in values) + " | " + " ".join(values)).encode()
    found = []
    for v in values:
        at = text.index(f"KEY={v}".encode()) + 4
        found.append(Finding(at, at + len(v), "secret:assignment", "warn", "secret_assignment"))
    carried: dict = {}
    got = repeats.with_repeats(text, found, carried)
    assert all(f in got for f in found)
    spread = {text[g.start:g.end].decode() for g in got if g.rule.endswith("/repeat")}
    assert spread == set(values[:8]) and len(carried) == 8
