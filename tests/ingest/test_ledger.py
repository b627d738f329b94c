"""The harness ledger: what covers a file, what survives a restart, what a broken ledger
costs (a re-read, never a loss)."""

import os

from abcd_daemon.ingest.ledger import Ledger
from abcd_daemon.ingest.report import FileOutcome


def held(path, **kw):
    return FileOutcome(path=path, outcome="held", sha256="ab" * 32, **kw)


def test_a_file_is_covered_only_in_the_size_and_mtime_it_was_handed_over_in(home):
    ledger = Ledger(home)
    ledger.record("/p/s1.jsonl", 10, 111, held("/p/s1.jsonl"))
    assert ledger.covers("/p/s1.jsonl", 10, 111)
    assert not ledger.covers("/p/s1.jsonl", 11, 111) and not ledger.covers("/p/s1.jsonl", 10, 112)
    assert not ledger.covers("/p/other.jsonl", 10, 111)
    assert ledger.handled_sig("/p/s1.jsonl") == (10, 111)


def test_a_stage_that_failed_never_covers_and_unowned_covers_until_retried(home):
    ledger = Ledger(home)
    ledger.record("/p/a.jsonl", 1, 1, FileOutcome(path="/p/a.jsonl", outcome="failed", reason="stage-failed"))
    ledger.record("/p/b.jsonl", 1, 1, FileOutcome(path="/p/b.jsonl", outcome="unowned"))
    assert not ledger.covers("/p/a.jsonl", 1, 1) and ledger.handled_sig("/p/a.jsonl") is None
    assert ledger.covers("/p/b.jsonl", 1, 1)
    assert not ledger.covers("/p/b.jsonl", 1, 1, retry_unowned=True)


def test_the_ledger_and_its_followed_sessions_survive_a_restart(home):
    ledger = Ledger(home)
    ledger.record("/p/s1.jsonl", 10, 111, held("/p/s1.jsonl", root_sha="c" * 40, session_id="s1"))
    assert ledger.follow("/x/s2.jsonl") and not ledger.follow("/x/s2.jsonl")
    assert ledger.save()
    again = Ledger.load(home)
    assert again.covers("/p/s1.jsonl", 10, 111) and again.get("/p/s1.jsonl").session_id == "s1"
    assert again.followed() == ["/x/s2.jsonl"]
    assert os.stat(home.harness_ledger).st_mode & 0o777 == 0o600


def test_an_unchanged_ledger_is_not_rewritten(home):
    ledger = Ledger(home)
    ledger.record("/p/s1.jsonl", 10, 111, held("/p/s1.jsonl"))
    assert ledger.save() and not ledger.save()


def test_a_followed_file_stays_followed_when_handed_over_and_is_dropped_when_gone(home):
    ledger = Ledger(home)
    ledger.follow("/x/s2.jsonl")
    ledger.record("/x/s2.jsonl", 5, 5, held("/x/s2.jsonl"))
    assert ledger.followed() == ["/x/s2.jsonl"] and ledger.covers("/x/s2.jsonl", 5, 5)
    ledger.forget("/x/s2.jsonl")
    assert ledger.followed() == [] and ledger.get("/x/s2.jsonl") is None


def test_an_unfollowed_file_never_handed_over_leaves_no_entry(home):
    ledger = Ledger(home)
    ledger.follow("/x/s3.jsonl")
    ledger.unfollow("/x/s3.jsonl")
    assert len(ledger) == 0


def test_a_broken_ledger_is_started_afresh_and_said_so(home, caplog):
    home.root.mkdir(parents=True)
    home.harness_ledger.write_bytes(b'{"schema": 1, "files": {"/p": {"size": "ten"}}}')
    ledger = Ledger.load(home)
    assert len(ledger) == 0 and "starting a fresh one" in caplog.text
    home.harness_ledger.write_bytes(b'{"schema": 99}')
    assert len(Ledger.load(home)) == 0 and "schema 99" in caplog.text


def test_a_vanished_file_handed_over_is_forgotten(home):
    ledger = Ledger(home)
    ledger.record("/p/s1.jsonl", 10, 111, held("/p/s1.jsonl"))
    ledger.record("/p/s1.jsonl", 10, 111, None)
    assert ledger.get("/p/s1.jsonl") is None
