"""Catch-ups: what changed since the ledger last saw it is staged, through ingest's
ownership ladder; what it covers is never read again."""

import os
import time

from abcd_daemon.config import Config
from abcd_daemon.ingest.catchup import catch_up, catch_up_project
from abcd_daemon.ingest.ledger import Ledger
from abcd_daemon.queue.staged import list_staged
from abcd_daemon.store.lane import Lane

from ..conftest import make_repo
from .conftest import aged_transcript

CONFIG = Config(watch_settle_s=5.0)


def staged(home, sha):
    return {(e.session_id, e.agent_id): e for e in list_staged(Lane(home, sha), now_ns=time.time_ns(), ttl_s=1e9)}


def test_the_first_catch_up_stages_everything_quiet_and_the_next_reads_nothing(home, repo, tmp_path):
    path, sha = repo
    root = tmp_path / "projects"
    main = aged_transcript(root / "-repo" / "s1.jsonl", "s1", path)
    aged_transcript(root / "-repo" / "s1" / "subagents" / "agent-a1.jsonl", "s1", path, agent="a1")
    ledger = Ledger(home)
    first = catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert (first.found, first.read, first.staged) == (2, 2, 2)
    assert set(staged(home, sha)) == {("s1", ""), ("s1", "a1")}
    original = main.read_bytes()
    st = main.stat()  # same size and mtime, other bytes: only a read could notice
    main.write_bytes(original.replace(b"line 0", b"LINE 0"))
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = catch_up(home, Ledger.load(home), [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert (second.found, second.read, second.staged) == (2, 0, 0)
    assert open(staged(home, sha)[("s1", "")].path, "rb").read() == original


def test_a_transcript_still_being_written_is_left_to_the_watcher(home, repo, tmp_path):
    root = tmp_path / "projects"
    aged_transcript(root / "-repo" / "s1.jsonl", "s1", repo[0], age_s=0.0)
    result = catch_up(home, Ledger(home), [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert (result.deferred, result.staged) == (1, 0)


def test_a_transcript_that_grew_since_it_was_caught_up_is_staged_again(home, repo, tmp_path):
    root = tmp_path / "projects"
    main = aged_transcript(root / "-repo" / "s1.jsonl", "s1", repo[0])
    ledger = Ledger(home)
    catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    aged_transcript(main, "s1", repo[0], n=5)
    result = catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert (result.read, result.staged) == (1, 1)
    assert staged(home, repo[1])[("s1", "")].bytes == main.stat().st_size


def test_a_transcript_no_repository_owns_is_tried_again_once_its_repository_exists(home, tmp_path):
    root = tmp_path / "projects"
    later = tmp_path / "later"
    later.mkdir()
    aged_transcript(root / "-later" / "s1.jsonl", "s1", later)
    ledger = Ledger(home)
    first = catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert first.staged == 0 and [p.reason for p in first.problems] == ["no-repository"]
    assert ledger.get(str(root / "-later" / "s1.jsonl")).outcome == "unowned"
    sha = make_repo(later)
    again = catch_up(home, ledger, [str(root)], config=CONFIG, now_ns=time.time_ns())
    assert again.staged == 1 and ("s1", "") in staged(home, sha)


def test_a_followed_session_outside_every_root_is_caught_up_with_its_sub_agents(home, repo, tmp_path):
    elsewhere = tmp_path / "elsewhere" / "-repo"
    main = aged_transcript(elsewhere / "s9.jsonl", "s9", repo[0])
    aged_transcript(elsewhere / "s9" / "subagents" / "agent-a9.jsonl", "s9", repo[0], agent="a9")
    aged_transcript(elsewhere / "unrelated.jsonl", "unrelated", repo[0])
    result = catch_up(home, Ledger(home), [], config=CONFIG, now_ns=time.time_ns(), followed=[str(main)])
    assert result.staged == 2 and set(staged(home, repo[1])) == {("s9", ""), ("s9", "a9")}


def test_session_start_stages_the_project_s_earlier_sessions_at_once_but_not_its_own(home, repo, tmp_path):
    root = tmp_path / "projects"
    project = root / "-repo"
    aged_transcript(project / "s-old.jsonl", "s-old", repo[0], age_s=0.0)  # /exit a moment ago
    aged_transcript(project / "s-old" / "subagents" / "agent-a1.jsonl", "s-old", repo[0], agent="a1", age_s=0.0)
    new = aged_transcript(project / "s-new.jsonl", "s-new", repo[0], age_s=0.0)
    aged_transcript(root / "-other" / "s-x.jsonl", "s-x", repo[0])  # another project: not this hook's
    result = catch_up_project(home, Ledger(home), str(new), roots=[str(root)], config=CONFIG,
                              now_ns=time.time_ns())
    assert result.staged == 2
    assert set(staged(home, repo[1])) == {("s-old", ""), ("s-old", "a1")}


def test_a_session_start_naming_no_project_folder_walks_nothing(home, repo, tmp_path):
    loose = tmp_path / "loose"
    aged_transcript(loose / "notes.jsonl", "notes", repo[0])
    result = catch_up_project(home, Ledger(home), str(loose / "s1.jsonl"), roots=[], config=CONFIG,
                              now_ns=time.time_ns())
    assert (result.found, result.staged) == (0, 0)
    assert staged(home, repo[1]) == {}
