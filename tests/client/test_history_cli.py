"""The history verbs, through the real `abcd` executable, in a real repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L51FrUkr"
LINE = '{"type":"user","message":{"role":"user","content":"deploy with %s"}}\n' % TOKEN


def test_capture_list_show_round_trip(in_repo, cli, tmp_path):
    transcript = tmp_path / "sess-42.jsonl"
    transcript.write_text(LINE)
    code, out, err = cli("history", "capture", str(transcript))
    assert code == 0, err
    assert "stored sess-42" in out and "secrets=1" in out
    code, out, _ = cli("history", "capture", str(transcript))
    assert code == 0 and "already stored (no-op)" in out
    code, out, _ = cli("history", "list", "--json")
    [rec] = json.loads(out)
    assert rec["session_id"] == "sess-42" and rec["path"].startswith("~/") or rec["path"].startswith("/")
    code, out, _ = cli("history", "show", "sess-42")
    assert code == 0 and "session:    sess-42" in out and TOKEN not in out and "ghp" in out
    code, out, _ = cli("history", "show", "sess-42", "--json")
    assert TOKEN not in json.loads(out)["body"]


def test_show_of_an_unknown_key_is_a_clear_error(in_repo, cli):
    code, out, err = cli("history", "show", "nope")
    assert code == 1 and "no record for 'nope'" in err and "Traceback" not in err


def test_verbs_refuse_outside_a_git_checkout(cli, tmp_path):
    code, _, err = cli("history", "list", cwd=tmp_path)
    assert code == 2 and "not inside a git repository" in err
    code, out, err = cli("history", "staged", "--all-repos", cwd=tmp_path)
    assert code == 0, err  # the survey works anywhere


@pytest.mark.parametrize("case", ["symlink", "fifo", "device", "directory", "over-cap", "empty"])
def test_capture_refuses_unreadable_input_clearly(in_repo, cli, tmp_path, case):
    target = tmp_path / "t.jsonl"
    if case == "symlink":
        (tmp_path / "real").write_text(LINE)
        target.symlink_to(tmp_path / "real")
    elif case == "fifo":
        os.mkfifo(target)
    elif case == "device":
        target = "/dev/zero"
    elif case == "directory":
        target.mkdir()
    elif case == "over-cap":
        with open(target, "wb") as f:
            f.truncate((64 << 20) + 1)
    elif case == "empty":
        target.write_text("")
    code, out, err = cli("history", "capture", str(target), "--session", "s1")
    assert code != 0 and err.startswith("abcd: ") and "Traceback" not in err
    assert cli("history", "list", "--json")[1].strip() == "[]"


@pytest.mark.parametrize("sid", ["a/b", "..", "x\ny", "x" * 300])
def test_capture_refuses_unusable_ids(in_repo, cli, tmp_path, sid):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(LINE)
    code, _, err = cli("history", "capture", str(transcript), "--session", sid)
    assert code == 2 and "not a usable id" in err and "Traceback" not in err


def test_capture_of_a_ten_megabyte_single_line(in_repo, cli, tmp_path):
    transcript = tmp_path / "big.jsonl"
    transcript.write_text('{"blob": "' + "ab c" * (10 << 18) + '"}\n')
    code, out, err = cli("history", "capture", str(transcript))
    assert code == 0, err


def test_staged_drain_discard_cycle(in_repo, cli, tmp_path):
    from abcd_daemon.paths import Home
    from abcd_daemon.queue.stage import stage
    from abcd_daemon.config import Config
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.meta import CaptureMeta

    _, sha = in_repo
    lane = Lane(Home.from_env(), sha)
    stage(lane, LINE.encode(), CaptureMeta(session_id="one"), config=Config(), now_ns=1_767_225_600 * 10**9)
    res = stage(lane, LINE.encode(), CaptureMeta(session_id="two"), config=Config(), now_ns=1_767_225_601 * 10**9)
    code, out, _ = cli("history", "staged")
    assert code == 0 and "OVERDUE" in out and "2 staged transcript(s) hold UNREDACTED text" in out
    code, out, err = cli("history", "discard", res.entry.name)
    assert code == 2 and "pass --yes to confirm" in err
    code, out, _ = cli("history", "discard", res.entry.name, "--yes")
    assert code == 0 and "deleted" in out
    code, out, _ = cli("history", "drain", "--json")
    result = json.loads(out)
    assert code == 0 and [r["session_id"] for r in result["captured"]] == ["one"]
    code, out, _ = cli("history", "staged")
    assert "nothing staged" in out


def test_drain_and_capture_exit_non_zero_with_a_degraded_scanner(in_repo, cli, tmp_path):
    from abcd_daemon.config import Config
    from abcd_daemon.paths import Home
    from abcd_daemon.queue.stage import stage
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.meta import CaptureMeta

    home = Home.from_env()
    stage(Lane(home, in_repo[1]), LINE.encode(), CaptureMeta(session_id="s"), config=Config(),
          now_ns=1_767_225_600 * 10**9)
    home.config_file.write_text('[[scanner.rules]]\nname = "b"\nseverity = "hard_fail"\n'
                                'keywords = ["x"]\nregex = "("\n')
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(LINE)
    code, _, err = cli("history", "capture", str(transcript))
    assert code == 1 and "degraded scanner" in err
    code, out, err = cli("history", "drain")
    assert code == 1 and "FAILED  s" in out and "raw transcript kept (unredacted)" in out
    assert "1 staged transcript(s) could not be stored" in err


def test_a_bad_config_file_is_named_in_the_error(in_repo, cli):
    from abcd_daemon.paths import Home

    home = Home.from_env()
    home.root.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("drain_interval_s = -3\n")
    code, _, err = cli("history", "staged")
    assert code == 2 and "drain_interval_s must be a positive number" in err


def _stage_some(sha, n):
    from abcd_daemon.config import Config
    from abcd_daemon.paths import Home
    from abcd_daemon.queue.stage import stage
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.meta import CaptureMeta

    lane = Lane(Home.from_env(), sha)
    for i in range(n):
        stage(lane, (LINE * 50).encode(), CaptureMeta(session_id=f"s{i}"), config=Config(),
              now_ns=1_767_225_600 * 10**9 + i)
    return lane


def test_drain_draws_a_progress_bar_on_a_terminal_and_stays_quiet_when_piped(in_repo):
    from ..conftest import run_on_a_terminal
    from .conftest import ABCD

    _stage_some(in_repo[1], 3)
    code, stdout, drawn = run_on_a_terminal([str(ABCD), "history", "drain"],
                                            dict(os.environ, ABCD_LOCAL="1"))
    assert code == 0 and "\r" in drawn and "draining" in drawn and "3/3 files" in drawn
    assert stdout.count(b"stored  s") == 3


def test_capture_refuses_a_file_that_is_no_jsonl_transcript_as_intake_does(in_repo, cli):
    code, out, err = cli("history", "capture", "/etc/passwd", "--session", "s1")
    assert code == 2 and "Traceback" not in err
    assert "abcd: '/etc/passwd' is not a JSONL transcript (none of its lines is a JSON object)" in err
    code, out, _ = cli("history", "list", "--json")
    assert json.loads(out) == []  # nothing stored


def test_capture_by_hand_claims_no_hook_and_takes_a_sub_agents_lineage_from_its_sidecar(
        in_repo, cli, tmp_path):
    main = tmp_path / "sess-7.jsonl"
    main.write_text(LINE)
    assert cli("history", "capture", str(main))[0] == 0
    agent = tmp_path / "agent-a1234567.jsonl"
    agent.write_text(LINE.replace("deploy", "explore"))
    (tmp_path / "agent-a1234567.meta.json").write_text(json.dumps(
        {"agentType": "Explore", "spawnDepth": 2, "parentAgentId": "a7654321", "toolUseId": "toolu_9"}))
    assert cli("history", "capture", str(agent), "--session", "sess-7", "--agent-id", "a1234567")[0] == 0
    bare = tmp_path / "bare.jsonl"
    bare.write_text(LINE.replace("deploy", "bare"))
    assert cli("history", "capture", str(bare), "--session", "sess-7", "--agent-id", "a0000001")[0] == 0
    code, out, _ = cli("history", "list", "--session", "sess-7", "--json")
    records = {r["agent_id"] if "agent_id" in r else "": r for r in json.loads(out)}
    assert all("lineage_source" not in r for r in records.values())  # neither hook nor ingest
    assert "spawn_attribution" not in records[""]
    lead = records["a1234567"]
    assert (lead["spawn_attribution"], lead["spawn_depth"], lead["parent_agent_id"],
            lead["spawn_tool_use_id"], lead["agent_type"]) == ("sidecar", 2, "a7654321", "toolu_9", "Explore")
    assert records["a0000001"]["spawn_attribution"] == "unattributed"


def test_capture_from_stdin_streams_through_staging_and_leaves_no_copy(in_repo, cli):
    code, out, err = cli("history", "capture", "-", "--session", "sess-in", "--json",
                         input=(LINE * 3).encode())
    assert code == 0, err
    result = json.loads(out)
    assert result["wrote"] and result["record"]["redacted_secrets"] == 3
    home = Path(os.environ["ABCD_HOME"])
    staging = [p for p in (home / "transcripts").rglob("staging/*") if p.is_file()]
    assert staging == []  # the stdin copy is gone once the record is written
    code, out, err = cli("history", "capture", "-", "--session", "sess-in", input=b"")
    assert code == 2 and "stdin was empty" in err


def test_show_prints_a_record_over_the_streaming_threshold_as_it_would_print_it_whole(
        in_repo, cli):
    """Issue 16: ``show`` streams a large body (read block by block, never held), and
    what it prints is what printing the whole body at once printed: the text after the
    ``---`` line, trailing newlines trimmed, control characters made visible."""
    from abcd_daemon.limits import STREAM_ABOVE
    from abcd_daemon.paths import Home
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename
    from abcd_daemon.termsafe import sanitize_block

    _, sha = in_repo
    line = json.dumps({"type": "user", "message": {"content": "é \x1b[31m " + "w" * 3000}})
    body = ("\n" + "\n".join([line] * 6000) + "\n\n\n").encode()
    assert len(body) > STREAM_ABOVE
    lane = Lane(Home.from_env(), sha).ensure("records")
    rec = Record(session_id="sess-big", root_commit=sha, source_sha256="0" * 64,
                 captured_at=format_rfc3339_ns(10**18))
    (lane.records / record_filename(rec)).write_bytes(format_record(rec, body))
    code, out, err = cli("history", "show", "sess-big")
    assert code == 0, err
    printed = out.split("\n---\n", 1)[1]
    assert printed == sanitize_block(body.decode().rstrip("\n")) + "\n"


def test_show_json_writes_a_large_body_as_the_document_printing_it_whole_gave(in_repo, cli):
    """``show --json`` streams the body into its ``body`` string (never held whole): the
    same document as encoding the whole decoded, home-folded body — replacement
    characters for bytes that are not UTF-8, the home folded, escapes intact."""
    import os

    import msgspec

    from abcd_client.output import fold_paths
    from abcd_daemon.paths import Home
    from abcd_daemon.store.lane import Lane
    from abcd_daemon.store.record import Record, format_record, format_rfc3339_ns, record_filename

    _, sha = in_repo
    home = os.path.expanduser("~")
    line = json.dumps({"type": "user", "message": {"content": f"{home}/x \" \\ \x01 é"}})
    body = ("\n".join([line] * 3000) + "\n").encode() + b"\xff\xfe tail \xe2\x82" + b"w" * (3 << 20)
    lane = Lane(Home.from_env(), sha).ensure("records")
    rec = Record(session_id="sess-json", root_commit=sha, source_sha256="0" * 64,
                 captured_at=format_rfc3339_ns(10**18))
    (lane.records / record_filename(rec)).write_bytes(format_record(rec, body))
    code, out, err = cli("history", "show", "sess-json", "--json")
    assert code == 0, err
    doc = json.loads(out)
    whole = format_record(rec, body).split(b"\n---\n", 1)[1].decode("utf-8", "replace")
    assert doc["body"] == fold_paths(whole)
    fields = {k: v for k, v in doc.items() if k != "body"}
    expected = msgspec.json.format(msgspec.json.Encoder(order="deterministic").encode(
        dict(fields, body=doc["body"])), indent=2).decode() + "\n"
    assert out == expected
