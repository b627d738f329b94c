"""The hook shim exits 0 fast on every path and never loses a payload it was handed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

import pytest

from .procs import SHIM, DaemonProc, env_for, run_shim, shim_log, wedged_listener

PAYLOAD = {"session_id": "sess-1", "cwd": "/nowhere", "hook_event_name": "SubagentStop",
           "agent_id": "a1", "agent_transcript_path": "/nowhere/agent-a1.jsonl"}


def spooled(env) -> list[str]:
    new = os.path.join(env["ABCD_HOME"], "spool", "new")
    return sorted(os.listdir(new)) if os.path.isdir(new) else []


def test_shim_spools_with_the_daemon_absent(tmp_path):
    env = env_for(tmp_path)
    res = run_shim("subagent-stop", PAYLOAD, env)
    assert res.returncode == 0 and res.stdout == b""
    [name] = spooled(env)
    header, payload = open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb").read().split(b"\n", 1)
    assert json.loads(header)["event"] == "subagent-stop"
    assert json.loads(payload) == PAYLOAD  # the harness's bytes, unchanged
    assert shim_log(env)[-1].endswith("spooled,daemon-absent")


def test_shim_rings_a_running_daemon(tmp_path):
    env = env_for(tmp_path)
    daemon = DaemonProc(env, tmp_path / "daemon.log").wait_ready()
    try:
        res = run_shim("session-start", {"session_id": "s", "cwd": str(tmp_path)}, env)
        assert res.returncode == 0
        assert shim_log(env)[-1].endswith("spooled+rang")
    finally:
        assert daemon.stop() == 0


def test_shim_exits_promptly_against_a_wedged_daemon(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(os.path.dirname(env["ABCD_SOCKET"]))
    wedged = socket.socket(socket.AF_UNIX)
    wedged.bind(env["ABCD_SOCKET"])
    wedged.listen(0)  # accepts into the backlog, never reads
    try:
        for _ in range(5):  # fill the backlog too
            t0 = time.monotonic()
            res = run_shim("subagent-stop", PAYLOAD, env)
            assert res.returncode == 0 and time.monotonic() - t0 < 2
        assert len(spooled(env)) == 5
    finally:
        wedged.close()


def test_shim_falls_back_when_abcd_home_is_unusable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = env_for(tmp_path, ABCD_HOME=str(blocker / "home"))
    res = run_shim("subagent-stop", PAYLOAD, env)
    assert res.returncode == 0
    assert b"could not take the payload" in res.stderr
    fallback = os.path.join(os.path.dirname(env["ABCD_SOCKET"]), "spool", "new")
    assert len(os.listdir(fallback)) == 1


def test_shim_exits_zero_when_no_spool_can_take_the_payload(tmp_path):
    env = env_for(tmp_path)
    # RLIMIT_FSIZE below the payload size: every write fails (EFBIG), as on a full disk.
    res = subprocess.run(["prlimit", "--fsize=16", str(SHIM), "subagent-stop"],
                         input=json.dumps(PAYLOAD).encode(), env=env, capture_output=True, timeout=10)
    assert res.returncode == 0
    assert b"could not spool" in res.stderr
    assert b"abcd history ingest" in res.stderr  # tells the user how to recover


@pytest.mark.parametrize("stdin", [b"\x00\xffgarbage", b"", b"[1, 2, 3]"])
def test_shim_spools_garbage_as_it_came(tmp_path, stdin):
    env = env_for(tmp_path)
    res = run_shim("session-end", stdin, env)
    assert res.returncode == 0
    [name] = spooled(env)
    data = open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb").read()
    assert data.split(b"\n", 1)[1] == stdin


def test_shim_survives_a_closed_stdin(tmp_path):
    env = env_for(tmp_path)
    res = subprocess.run(f"exec 0<&- ; {SHIM} session-end", shell=True, env=env,
                         capture_output=True, timeout=10)
    assert res.returncode == 0
    assert len(spooled(env)) == 1


def test_shim_spools_a_marker_for_an_over_cap_payload(tmp_path):
    env = env_for(tmp_path)
    res = run_shim("subagent-stop", b"x" * ((1 << 20) + 1), env)
    assert res.returncode == 0 and b"over the 1048576-byte cap" in res.stderr
    [name] = spooled(env)
    header = open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb").read().split(b"\n")[0]
    assert json.loads(header)["over_cap"] is True


def test_shim_exits_zero_for_an_unknown_event_and_no_arguments(tmp_path):
    env = env_for(tmp_path)
    assert run_shim("bogus", PAYLOAD, env).returncode == 0
    res = subprocess.run([str(SHIM)], input=b"{}", env=env, capture_output=True, timeout=10)
    assert res.returncode == 0


def test_cli_hook_verb_behaves_like_the_shim(tmp_path):
    env = env_for(tmp_path)
    res = subprocess.run([os.path.join(os.path.dirname(os.sys.executable), "abcd"), "hook",
                          "subagent-stop", "--unknown-flag"], input=json.dumps(PAYLOAD).encode(),
                         env=env, capture_output=True, timeout=30)
    assert res.returncode == 0 and res.stdout == b""
    assert len(spooled(env)) == 1


def test_session_start_prints_the_backlog_notice_from_the_status_file(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(env["ABCD_HOME"])
    status = {"lanes": [
        {"root_sha": "a" * 40, "name": "alpha", "staged": 2, "staged_bytes": 4096, "overdue": 1},
        {"root_sha": "b" * 40, "name": "beta", "quarantined": 1, "quarantined_bytes": 10},
        {"root_sha": "c" * 40, "gap_count": 3},
    ], "spool_failed": 0}
    with open(os.path.join(env["ABCD_HOME"], "status.json"), "w") as f:
        json.dump(status, f)
    res = run_shim("session-start", {"session_id": "s", "cwd": str(tmp_path)}, env)
    err = res.stderr.decode()
    assert res.returncode == 0 and res.stdout == b""
    assert "2 repositories (alpha, beta)" in err and "UNREDACTED" in err
    assert "past the 168h0m0s staging limit" in err and "quarantined" in err
    assert "SubagentStop 3 time(s) without an agent_transcript_path" in err
    assert "daemon is not running" in err


def test_hooks_manifest_wires_the_five_events_to_the_shim():
    manifest = json.load(open(SHIM.parent / "hooks.json"))
    commands = {event: entry[0]["hooks"][0]["command"] for event, entry in manifest["hooks"].items()}
    assert commands == {
        "SubagentStop": '"${CLAUDE_PLUGIN_ROOT}/hooks/abcd-hook" subagent-stop',
        "SessionEnd": '"${CLAUDE_PLUGIN_ROOT}/hooks/abcd-hook" session-end',
        "SessionStart": '"${CLAUDE_PLUGIN_ROOT}/hooks/abcd-hook" session-start',
        "Stop": '"${CLAUDE_PLUGIN_ROOT}/hooks/abcd-hook" stop',
        "UserPromptSubmit": '"${CLAUDE_PLUGIN_ROOT}/hooks/abcd-hook" user-prompt-submit',
    }
    assert os.access(SHIM, os.X_OK)


# --------------------------------------------------------------------------- stdin deadline


def _header(env, name):
    with open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb") as f:
        header, payload = f.read().split(b"\n", 1)
    return json.loads(header), payload


def test_a_hook_whose_stdin_never_closes_spools_what_arrived_and_exits_zero(tmp_path):
    env = env_for(tmp_path)
    # `sleep 30 | abcd-hook session-end`: the writer keeps stdin open and sends nothing.
    writer = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
    try:
        res = subprocess.run([str(SHIM), "session-end"], stdin=writer.stdout, env=env,
                             capture_output=True, timeout=20)  # before: blocked until killed
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    assert res.returncode == 0 and res.stdout == b""
    assert b"stdin was still open 1s after the hook started" in res.stderr
    [name] = spooled(env)
    header, payload = _header(env, name)
    assert header["cut_short"] is True and payload == b""


def test_a_complete_payload_on_a_stdin_left_open_is_spooled_whole_without_waiting_for_eof(tmp_path):
    env = env_for(tmp_path)
    proc = subprocess.Popen([str(SHIM), "session-end"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(json.dumps(PAYLOAD).encode())
        proc.stdin.flush()  # and never closed, as Claude Code's /clear leaves it
        assert proc.wait(timeout=20) == 0
        assert proc.stderr.read() == b""
    finally:
        proc.stdin.close()
    [name] = spooled(env)
    header, payload = _header(env, name)
    assert header["cut_short"] is False and json.loads(payload) == PAYLOAD


def test_half_a_payload_on_a_stdin_left_open_is_spooled_marked_cut_short(tmp_path):
    env = env_for(tmp_path)
    proc = subprocess.Popen([str(SHIM), "subagent-stop"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(b'{"session_id": "sess-1", "agent_')
        proc.stdin.flush()
        assert proc.wait(timeout=20) == 0
        assert b"spooled the 32 byte(s) of the subagent-stop payload that had arrived" in proc.stderr.read()
    finally:
        proc.stdin.close()
    [name] = spooled(env)
    header, payload = _header(env, name)
    assert header["cut_short"] is True and payload == b'{"session_id": "sess-1", "agent_'


# --------------------------------------------------------------------------- planted spools


def test_the_shim_skips_a_group_writable_spool_says_why_and_uses_the_next(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = env_for(tmp_path, ABCD_HOME=str(blocker / "home"))
    sock_dir = os.path.dirname(env["ABCD_SOCKET"])
    os.makedirs(sock_dir)
    os.chmod(sock_dir, 0o770)  # anyone in the group could plant payloads or symlinks here
    res = run_shim("subagent-stop", PAYLOAD, env)
    assert res.returncode == 0
    err = res.stderr.decode()
    assert f"{sock_dir} is group- or world-writable (mode 0o770); refusing it" in err
    assert os.listdir(sock_dir) == []  # nothing written into it
    tmp_spool = os.path.join(env["TMPDIR"], f"abcd-{os.geteuid()}", "spool", "new")
    assert f"spooled it in {os.path.dirname(tmp_spool)}" in err
    assert len(os.listdir(tmp_spool)) == 1


def test_the_shim_never_writes_into_a_temp_spool_another_user_planted(tmp_path, other_user):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = env_for(tmp_path, ABCD_HOME=str(blocker / "home"),
                  ABCD_SOCKET=str(blocker / "run" / "daemon.sock"))
    planted = os.path.join(env["TMPDIR"], f"abcd-{os.geteuid()}")
    os.makedirs(os.path.join(planted, "spool", "new"))
    os.chmod(env["TMPDIR"], 0o1777)  # a shared temp dir, as /tmp is
    for level in ("", "spool", "spool/new"):
        other_user.owns(os.path.join(planted, level))
    res = run_shim("subagent-stop", PAYLOAD, env)
    assert res.returncode == 0 and res.stdout == b""
    err = res.stderr.decode()
    assert (f"{planted} is owned by uid {other_user.uid}, not by this user (uid {os.geteuid()}); "
            "refusing it") in err
    assert "could not spool the subagent-stop payload anywhere" in err
    assert os.listdir(os.path.join(planted, "spool", "new")) == []


def test_the_shim_refuses_a_symlinked_spool_new_and_writes_nothing_where_it_points(tmp_path):
    env = env_for(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.makedirs(os.path.join(env["ABCD_HOME"], "spool"), mode=0o700)
    os.symlink(elsewhere, os.path.join(env["ABCD_HOME"], "spool", "new"))
    res = run_shim("session-end", {"session_id": "s"}, env)
    assert res.returncode == 0
    assert f"{env['ABCD_HOME']}/spool/new is a symlink; refusing it" in res.stderr.decode()
    assert os.listdir(elsewhere) == []
    fallback = os.path.join(os.path.dirname(env["ABCD_SOCKET"]), "spool", "new")
    assert len(os.listdir(fallback)) == 1  # kept, in the next spool


# --------------------------------------------------------------------------- a full queue


def test_a_full_listen_queue_is_a_busy_daemon_not_an_absent_one(tmp_path):
    env = env_for(tmp_path)
    held = wedged_listener(env)
    try:
        res = run_shim("session-start", {"session_id": "s", "cwd": str(tmp_path)}, env)
        assert res.returncode == 0
        assert shim_log(env)[-1].endswith("spooled,daemon-busy")
        assert b"daemon is not running" not in res.stderr
        assert len(spooled(env)) == 1
    finally:
        for s in held:
            s.close()
# -- liveness markers, coverage notice, the /clear stdin (issue 17) --------------------
LIVE = {"session_id": "sess-2", "transcript_path": "/h/projects/-r/sess-2.jsonl", "cwd": "/r",
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
        "prompt": "deploy with token hunter2 please"}


def spooled_payload(env, name) -> bytes:
    return open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb").read().split(b"\n", 1)[1]


@pytest.mark.parametrize("event", ["stop", "user-prompt-submit"])
def test_stop_and_user_prompt_submit_spool_a_liveness_marker_and_never_the_prompt(tmp_path, event):
    env = env_for(tmp_path)
    res = run_shim(event, dict(LIVE, stop_hook_active=False), env)
    assert res.returncode == 0 and res.stdout == b""
    [name] = spooled(env)
    assert json.loads(spooled_payload(env, name)) == {
        "session_id": "sess-2", "transcript_path": "/h/projects/-r/sess-2.jsonl", "cwd": "/r",
        "hook_event_name": "UserPromptSubmit"}
    assert b"hunter2" not in open(os.path.join(env["ABCD_HOME"], "spool", "new", name), "rb").read()


@pytest.mark.parametrize("stdin", [b"\x00\xffgarbage", b"", b"[1, 2, 3]", b'{"session_id": "s"} trailing'])
def test_a_liveness_payload_that_is_not_one_json_object_spools_an_empty_marker(tmp_path, stdin):
    env = env_for(tmp_path)
    assert run_shim("stop", stdin, env).returncode == 0
    [name] = spooled(env)
    assert spooled_payload(env, name) == b"{}"


def test_session_start_notice_counts_harness_transcripts_not_stored(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(env["ABCD_HOME"])
    status = {"lanes": [], "missing": {"total": 4, "soonest_days_left": 3,
                                      "reasons": {"no-repository": 2, "refused": 1, "settling": 1}}}
    with open(os.path.join(env["ABCD_HOME"], "status.json"), "w") as f:
        json.dump(status, f)
    err = run_shim("session-start", {"session_id": "s", "cwd": str(tmp_path)}, env).stderr.decode()
    assert "3 harness transcript(s) are not stored (2 no repository, 1 refused)" in err
    assert "deletes the first of them in 3 day(s)" in err and "abcd history missing" in err


def test_session_start_says_nothing_of_transcripts_that_are_only_settling(tmp_path):
    env = env_for(tmp_path)
    os.makedirs(env["ABCD_HOME"])
    with open(os.path.join(env["ABCD_HOME"], "status.json"), "w") as f:
        json.dump({"lanes": [], "missing": {"total": 1, "reasons": {"settling": 1}}}, f)
    err = run_shim("session-start", {"session_id": "s", "cwd": str(tmp_path)}, env).stderr.decode()
    assert "not stored" not in err


def test_session_end_with_stdin_left_open_exits_0_promptly_and_spools_the_payload(tmp_path):
    """/clear: the harness writes the SessionEnd payload and never closes the hook's
    stdin. The hook must still exit 0 within the harness's SessionEnd budget, with the
    payload on disk."""
    from ..ingest.fake_claude import OpenHook

    env = env_for(tmp_path)
    payload = {"session_id": "sess-3", "transcript_path": "/h/sess-3.jsonl", "cwd": str(tmp_path),
               "hook_event_name": "SessionEnd", "reason": "clear"}
    code, elapsed = OpenHook(env, tmp_path, payload).finish(harness_timeout=10.0)
    assert code == 0 and elapsed < 3.0
    [name] = spooled(env)
    assert json.loads(spooled_payload(env, name)) == payload
