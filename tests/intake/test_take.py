"""Taking one spooled entry: refusals say exactly what was wrong, and nothing is lost."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from abcd_daemon.store.lane import Lane
from abcd_daemon.queue.staged import list_staged

from .conftest import failed_reason, spool_entry

LINE = json.dumps({"type": "user", "uuid": "u0", "message": {"content": "hello"}}).encode() + b"\n"


def session_end(repo, transcript) -> dict:
    return {"session_id": "sess-take", "cwd": str(repo), "hook_event_name": "SessionEnd",
            "transcript_path": str(transcript)}


# --------------------------------------------------------------------------- the entry itself


def test_a_symlinked_spool_entry_is_moved_to_failed_as_a_symlink_and_its_target_untouched(
        home, intake, tmp_path):
    target = tmp_path / "victim.json"
    target.write_text('{"precious": true}')
    (home.spool / "new").mkdir(parents=True)
    link = home.spool / "new" / "000-link.json"
    link.symlink_to(target)
    out = intake(link)
    assert out.status == "failed"
    assert f"{link}' is not a readable regular file: it is a symlink" in failed_reason(home, link.name)
    assert (home.spool_failed / link.name).is_symlink()  # kept as it was, not followed
    assert target.read_text() == '{"precious": true}'


def test_a_fifo_spool_entry_is_refused_without_blocking(home, intake):
    (home.spool / "new").mkdir(parents=True)
    fifo = home.spool / "new" / "000-fifo.json"
    os.mkfifo(fifo)  # no writer, ever: a blocking open would hang intake
    out = intake(fifo)
    assert out.status == "failed"
    assert "it is a FIFO" in failed_reason(home, fifo.name)


def test_a_directory_spool_entry_is_refused_as_a_directory(home, intake):
    (home.spool / "new" / "000-dir.json").mkdir(parents=True)
    out = intake(home.spool / "new" / "000-dir.json")
    assert out.status == "failed"
    assert "it is a directory" in failed_reason(home, "000-dir.json")


def test_a_spool_entry_owned_by_another_user_is_refused_unread(home, intake, repo, other_user):
    path = spool_entry(home.spool, "000-foreign.json", {"session_id": "s", "cwd": str(repo[0])},
                       event="session-start")
    other_user.owns(path)
    out = intake(path)
    assert out.status == "failed"
    assert (f"is owned by uid {other_user.uid}, not by this user (uid {os.geteuid()}); refusing "
            "to read another user's file") in failed_reason(home, path.name)
    assert (home.spool_failed / path.name).stat().st_uid == other_user.uid  # kept, not deleted


def test_an_unknown_header_version_goes_to_failed_with_the_reason(home, intake):
    path = spool_entry(home.spool, "000-v9.json", {"session_id": "s"}, version=9)
    out = intake(path)
    assert out.status == "failed"
    assert "header is version 9, and this daemon reads version 1 only" in failed_reason(home, path.name)
    assert (home.spool_failed / path.name).exists()


# --------------------------------------------------------------------------- cut short


def test_a_cut_short_entry_that_is_a_whole_payload_is_used(home, intake, repo):
    path = spool_entry(home.spool, "000-whole.json", {"session_id": "sess-cut", "cwd": str(repo[0])},
                       event="session-start", cut_short=True)
    out = intake(path)
    assert out.status == "noted"
    assert any("stdin was still open at its deadline" in w for w in out.warnings)
    assert not path.exists()


def test_a_cut_short_entry_that_is_half_a_payload_is_refused_as_never_finished(home, intake):
    path = spool_entry(home.spool, "000-half.json", b'{"session_id": "sess-cut", "cw',
                       cut_short=True)
    out = intake(path)
    assert out.status == "failed"
    reason = failed_reason(home, path.name)
    assert "the hook's stdin was still open 1s after it started" in reason
    assert "the 30 byte(s) that had arrived are not a whole payload" in reason


# --------------------------------------------------------------------------- the transcript


def test_a_transcript_owned_by_another_user_is_refused(home, intake, repo, tmp_path, other_user):
    transcript = tmp_path / "theirs.jsonl"
    transcript.write_bytes(LINE)
    other_user.owns(transcript)
    path = spool_entry(home.spool, "000-theirs.json", session_end(repo[0], transcript))
    out = intake(path)
    assert out.status == "failed"
    reason = failed_reason(home, path.name)
    assert f"transcript '<transcript_path, " in reason
    assert f"is owned by uid {other_user.uid}, not by this user" in reason
    assert str(transcript) not in reason  # a reason names the field, never its value
    assert list_staged(Lane(home, repo[1]), now_ns=0, ttl_s=1) == []


def test_a_relative_transcript_path_is_resolved_against_the_payloads_cwd(home, intake, repo):
    root, sha = repo
    (root / "logs").mkdir()
    (root / "logs" / "main.jsonl").write_bytes(LINE)
    payload = {**session_end(root, "logs/main.jsonl")}
    path = spool_entry(home.spool, "000-rel.json", payload)
    assert not os.path.exists("logs/main.jsonl")  # not where the daemon itself runs
    out = intake(path)
    assert out.status == "staged", out.message
    [entry] = list_staged(Lane(home, sha), now_ns=0, ttl_s=1)
    assert entry.source_path == str(root / "logs" / "main.jsonl")


def test_a_relative_transcript_path_without_an_absolute_cwd_is_refused(home, intake, repo):
    root, _ = repo
    # The session's lane is known from its start, so only the path itself is in question.
    start = spool_entry(home.spool, "000-start.json", {"session_id": "sess-take", "cwd": str(root)},
                        event="session-start")
    assert intake(start).status == "noted"
    payload = {"session_id": "sess-take", "transcript_path": "main.jsonl"}
    path = spool_entry(home.spool, "001-nocwd.json", payload, cwd="")
    out = intake(path)
    assert out.status == "failed"
    assert failed_reason(home, path.name).startswith(
        "the transcript path '<transcript_path, 10 characters>' is relative and the payload "
        "carries no absolute cwd")


# --------------------------------------------------------------------------- across filesystems


@pytest.fixture
def tmpfs_dir(tmp_path):
    path = tmp_path / "tmpfs"
    path.mkdir(mode=0o700)
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(path)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip()}): the cross-filesystem "
                    "move needs a second filesystem")
    yield path
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_an_unusable_entry_in_a_spool_on_another_filesystem_reaches_failed_whole(
        home, intake, tmpfs_dir):
    data = b'{"session_id": "../escape"}'
    path = spool_entry(tmpfs_dir / "spool", "000-far.json", data)
    out = intake(path)
    assert out.status == "failed", out.message  # rename gives EXDEV: copied, then removed
    assert (home.spool_failed / path.name).read_bytes().endswith(b"\n" + data)
    assert "is not a usable id" in failed_reason(home, path.name)
    assert not path.exists()
