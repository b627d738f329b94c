"""Discard (the only deletion) and the cross-lane backlog survey."""

import os

import pytest

from abcd_daemon.errors import InputError, NotFoundError
from abcd_daemon.locate.notes import note_gap
from abcd_daemon.queue.discard import discard
from abcd_daemon.queue.stage import stage
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.queue.survey import survey_backlog
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta

from .conftest import DAY_NS, T0


def test_discard_removes_one_transcript_and_its_metadata(lane, config):
    keep = stage(lane, b"keep\n", CaptureMeta(session_id="keep"), config=config, now_ns=T0)
    gone = stage(lane, b"gone\n", CaptureMeta(session_id="gone"), config=config, now_ns=T0 + 1)
    result = discard(lane, gone.entry.name, config=config, now_ns=T0)
    assert result.bytes == 5 and len(result.removed) == 2
    assert [e.name for e in list_staged(lane, now_ns=T0, ttl_s=1e9)] == [keep.entry.name]
    assert not any(n.startswith(gone.entry.name[:-4]) for n in os.listdir(lane.staging))


@pytest.mark.parametrize("name", ["../x.raw", "a/b.raw", "*.raw", ".raw", "x.stage.json", "..", "x?.raw"])
def test_discard_refuses_anything_but_a_bare_staged_filename(lane, config, name):
    stage(lane, b"x\n", CaptureMeta(session_id="s"), config=config, now_ns=T0)
    with pytest.raises(InputError, match="bare staged-entry filename"):
        discard(lane, name, config=config, now_ns=T0)
    assert len(list_staged(lane, now_ns=T0, ttl_s=1e9)) == 1


def test_discard_of_an_unknown_entry_says_so(lane, config):
    lane.ensure("staging", "quarantine")
    with pytest.raises(NotFoundError, match="neither staged nor quarantined"):
        discard(lane, "20260101T000000.000000000Z-x.raw", config=config, now_ns=T0)


def test_survey_backlog_sees_every_repository_in_the_store(home, config):
    a, b, c = (Lane(home, ch * 40) for ch in "abc")
    stage(a, b"1234\n", CaptureMeta(session_id="s1"), config=config, now_ns=T0)
    stage(b, b"12\n", CaptureMeta(session_id="s2"), config=config, now_ns=T0 + 8 * DAY_NS)
    note_gap(c, "SubagentStop", now_ns=T0)
    backlog = survey_backlog(home, now_ns=T0 + 8 * DAY_NS, ttl_s=config.staged_ttl_s)
    assert [x.root_sha[0] for x in backlog] == ["a", "b", "c"]
    assert backlog[0].staged == 1 and backlog[0].staged_bytes == 5 and backlog[0].overdue == 1
    assert backlog[1].overdue == 0 and backlog[2].gap_count == 1
    assert "s1" not in repr(backlog) and "s2" not in repr(backlog)  # never another lane's ids


def test_survey_backlog_skips_repositories_holding_nothing(home, config):
    Lane(home, "f" * 40).ensure("records", "staging")
    assert survey_backlog(home, now_ns=T0, ttl_s=config.staged_ttl_s) == []
