"""Hostile spools, through the REAL path: planted directories and entries, one running daemon.

The threat (issue 11 item 1): another local user pre-creates a spool the daemon sweeps —
``$TMPDIR/abcd-<uid>/spool`` under a world-writable ``/tmp`` — or makes ``new`` a symlink,
to forge sessions into the victim's corpus or move the victim's files. Every spool the
daemon sweeps must be ours alone: a refused one is named in ``status.json``, in
``abcd daemon status`` and in the session-start notice, and never swept. Every entry must
be a regular file of ours with a header version we read; anything else goes to
``spool/failed`` with a reason that says exactly what it was.

Every case ends with the daemon still answering (:meth:`Served.still_serving`); the last
one captures a real transcript and checks that every refused entry was kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abcd_daemon.limits import SPOOL_VERSION

from ..daemon.procs import SHIM, run_shim, shim_log, wait_for
from .served import GHP, SESSION, line

FORGED = "f0f0f0f0-0000-4000-8000-00000000f0f0"


def _entry(payload: dict, version: int = SPOOL_VERSION) -> bytes:
    header = {"abcd_spool": version, "event": "session-end", "received_ns": 1, "cwd": "",
              "over_cap": False, "cut_short": False}
    return json.dumps(header).encode() + b"\n" + json.dumps(payload).encode()


def _write(path: Path, data: bytes) -> Path:
    """Place ``data`` at ``path`` in one rename (intake never sees half of it)."""
    tmp = path.with_name(".planting")
    tmp.write_bytes(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


def _forged_payload(served) -> dict:
    """What an attacker would plant: the victim's private transcript, filed as a session."""
    secret = served.transcript("victims-private.jsonl", line(f"private {GHP}", 0) + b"\n")
    os.chmod(secret, 0o600)
    return {"session_id": FORGED, "cwd": str(served.repo), "hook_event_name": "SessionEnd",
            "transcript_path": str(secret)}


def _refused_in_status(served, spool: Path) -> str:
    """Ring the doorbell until ``status.json`` names ``spool`` as refused; its reason."""
    def named():
        served.ring()
        for x in served.status_json().get("refused_spools", []):
            if x["path"] == str(spool):
                return x["reason"]
        return None

    return wait_for(named, what=f"status.json to name {spool} as refused")


def _repaired(served, spool: Path) -> None:
    def cleared():
        served.ring()
        return all(x["path"] != str(spool) for x in served.status_json().get("refused_spools", []))

    wait_for(cleared, what=f"status.json to drop {spool} once it was repaired")


def _no_record_of(served, session: str) -> None:
    from abcd_daemon.store.records import list_records

    assert not [r for r in list_records(served.lane) if r.session_id == session]


# --------------------------------------------------------------------------- directories


def test_a_temp_spool_another_user_planted_is_refused_named_everywhere_and_never_swept(
        served, other_user):
    tmp = Path(served.env["TMPDIR"])
    os.chmod(tmp, 0o1777)  # a shared temp dir, as /tmp is
    planted = tmp / f"abcd-{os.geteuid()}"
    new = planted / "spool" / "new"
    new.mkdir(parents=True)
    forged = _write(new / "00000000000000000001-1-forged.json", _entry(_forged_payload(served)))
    for path in (planted, planted / "spool", new, forged):
        other_user.owns(path)
    try:
        reason = _refused_in_status(served, planted / "spool")
        assert reason.startswith(f"{planted} is owned by uid {other_user.uid}, not by this user")
        # `abcd daemon status` names it
        res = subprocess.run([sys.executable, "-m", "abcd_client", "daemon", "status"],
                             env=served.env, capture_output=True, timeout=30)
        assert res.returncode == 0
        assert f"refused:     {planted} is owned by uid {other_user.uid}" in res.stdout.decode()
        # ... and so does the session-start notice
        notice = run_shim("session-start", {"session_id": "next", "cwd": str(served.repo)},
                          served.env).stderr.decode()
        assert "abcd: 1 spool directory is refused and never swept: " + str(planted) in notice
        # a genuine payload is taken meanwhile, the forged one never is
        kind, why = served.outcome(served.hand_over("session-start", {
            "session_id": "genuine-start", "cwd": str(served.repo)}))
        assert kind == "taken", why
        assert forged.exists() and forged.stat().st_uid == other_user.uid
        _no_record_of(served, FORGED)
        assert f"not sweeping spool {planted}/spool" in served.daemon.read_log()
    finally:
        shutil.rmtree(planted)
        os.chmod(tmp, 0o700)
    _repaired(served, planted / "spool")
    served.still_serving()


def test_a_spool_new_symlinked_at_the_victims_directory_moves_nothing_out_of_it(served):
    victim = served.base / "victims-documents"
    victim.mkdir(mode=0o700)
    precious = _write(victim / "00000000000000000002-1-mine.json", _entry(_forged_payload(served)))
    spool = served.base / "run" / "spool"
    spool.mkdir(mode=0o700, exist_ok=True)
    shutil.rmtree(spool / "new", ignore_errors=True)
    (spool / "new").symlink_to(victim)
    try:
        reason = _refused_in_status(served, spool)
        assert reason.startswith(f"{spool}/new is a symlink; refusing it")
        assert os.listdir(victim) == [precious.name] and precious.read_bytes().startswith(b'{"abcd')
        _no_record_of(served, FORGED)
    finally:
        (spool / "new").unlink()
    _repaired(served, spool)
    served.still_serving()


def test_a_group_writable_fallback_spool_is_refused_then_swept_once_repaired(served):
    spool = served.base / "run" / "spool"
    (spool / "new").mkdir(parents=True, exist_ok=True, mode=0o700)
    waiting = _write(spool / "new" / "00000000000000000003-1-waiting.json", _entry(
        {"session_id": "waited-start", "cwd": str(served.repo)}).replace(
            b'"session-end"', b'"session-start"'))
    os.chmod(spool, 0o770)
    reason = _refused_in_status(served, spool)
    assert reason.startswith(f"{spool} is group- or world-writable (mode 0o770); refusing it")
    assert waiting.exists()  # not swept while anyone in the group could have planted it
    os.chmod(spool, 0o700)
    _repaired(served, spool)
    wait_for(lambda: not waiting.exists(), what="the kept payload to be taken once repaired")
    served.still_serving()


# --------------------------------------------------------------------------- entries


def _make_entry(kind: str, path: Path, served, request) -> str:
    """Plant one hostile entry of ``kind`` at ``path``; returns the reason expected."""
    if kind == "wrong-version":
        _write(path, _entry({"session_id": SESSION}, version=SPOOL_VERSION + 1))
        return (f"header is version {SPOOL_VERSION + 1}, and this daemon reads version "
                f"{SPOOL_VERSION} only")
    if kind == "symlink":
        target = _write(served.files / "pointed-at.json", _entry(_forged_payload(served)))
        path.symlink_to(target)
        return "is not a readable regular file: it is a symlink"
    if kind == "fifo":
        os.mkfifo(path)
        return "is not a readable regular file: it is a FIFO"
    if kind == "directory":
        path.mkdir()
        return "is not a readable regular file: it is a directory"
    other = request.getfixturevalue("other_user")
    _write(path, _entry(_forged_payload(served)))
    other.owns(path)
    return f"is owned by uid {other.uid}, not by this user (uid {os.geteuid()})"


@pytest.mark.parametrize("kind", ["wrong-version", "symlink", "fifo", "directory", "foreign-owner"])
def test_a_hostile_spool_entry_is_kept_in_failed_with_a_reason_naming_what_it_is(
        served, request, kind):
    name = f"0000000000000000001{len(kind)}-1-{kind}.json"
    expected = _make_entry(kind, served.home / "spool" / "new" / name, served, request)
    served.ring()
    reason_file = served.home / "spool" / "failed" / (name + ".reason")
    kept = served.home / "spool" / "failed" / name
    # The reason is written before the entry is moved (a crash between them leaves no
    # failed entry without its reason): wait for the move, not just for the reason.
    reason = wait_for(lambda: os.path.lexists(kept) and reason_file.exists() and reason_file.read_text(),
                      what=f"the {kind} entry and its reason in spool/failed")
    assert expected in reason
    assert not os.path.lexists(served.home / "spool" / "new" / name)
    _no_record_of(served, FORGED)
    if kind == "symlink":
        assert (served.files / "pointed-at.json").exists() and kept.is_symlink()
    served.still_serving()


def test_a_transcript_owned_by_another_user_is_refused(served, other_user):
    theirs = served.transcript("theirs.jsonl", line("their words") + b"\n")
    other_user.owns(theirs)
    reason = served.refused("session-end", served.session_end(theirs, session="theirs-session"))
    assert f"is owned by uid {other_user.uid}, not by this user" in reason
    assert str(theirs) not in reason  # named by field and size, never by value
    _no_record_of(served, "theirs-session")
    served.still_serving()


# --------------------------------------------------------------------------- stdin held open


def _shim_holding_stdin(served, event: str, data: bytes) -> tuple[str, str]:
    """Run the shim with ``data`` on a stdin that stays open; (spool id, stderr)."""
    before = len(shim_log(served.env))
    proc = subprocess.Popen([str(SHIM), event], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=served.env)
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read() == b""
        stderr = proc.stderr.read().decode()
    finally:
        proc.stdin.close()
    log = shim_log(served.env)
    assert len(log) == before + 1
    return log[-1].split(" ", 1)[0], stderr


def test_a_whole_payload_on_a_stdin_left_open_is_captured(served):
    transcript = served.transcript("held-open.jsonl", line("kept open", 0) + b"\n")
    spool_id, stderr = _shim_holding_stdin(served, "session-end", json.dumps(
        served.session_end(transcript, session="held-open-session")).encode())
    assert stderr == ""
    kind, reason = served.outcome(spool_id)
    assert kind == "taken", reason
    _, body = served.record_of(session="held-open-session")
    assert b"kept open" in body
    served.still_serving()


def test_half_a_payload_on_a_stdin_left_open_is_kept_in_failed_saying_it_never_finished(served):
    spool_id, stderr = _shim_holding_stdin(served, "session-end", b'{"session_id": "half-')
    assert "marked as cut short" in stderr
    kind, reason = served.outcome(spool_id)
    assert kind == "failed"
    assert "stdin was still open 1s after it started, and the 21 byte(s) that had arrived" in reason
    served.still_serving()


# --------------------------------------------------------------------------- afterwards


def test_after_all_of_it_a_real_transcript_is_captured_and_every_refusal_was_kept(served):
    served.captures_a_real_transcript("afeed002", "spools done")
    _no_record_of(served, FORGED)
    failed = [p for p in (served.home / "spool" / "failed").iterdir()
              if not p.name.endswith(".reason")]
    assert all((p.parent / (p.name + ".reason")).exists() for p in failed)
    status = served.still_serving()
    assert status["spool_failed"] == len([p for p in failed if p.name.endswith(".json")])
    assert status.get("refused_spools", []) == []  # every planted spool was cleared
