"""``abcd history reconstruct``: both files or stdout, the envelope, the refusals."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from abcd_client.commands import reconstruct as command
from abcd_daemon.paths import Home
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.record import format_record
from .support import CC, SESSION, record, tool_use, usage


@pytest.fixture
def cli(repo, monkeypatch, tmp_path):
    """A checkout whose store holds one session (main + one sub-agent), cwd inside it,
    HOME at the test's tmp dir; returns a function running the verb."""
    path, sha = repo
    monkeypatch.chdir(path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ABCD_LOCAL", "1")
    lane = Lane(Home.from_env(), sha).ensure("records")
    main = (CC().user("build it \x1b[31mred\x1b[0m")
            .assistant("m1", tool_use("tu_1", "Task", prompt="help"), usage=usage())
            .result("tu_1", "helped").say("m2", "done", usage=usage()))
    sub = CC(agent_id="helper1").user("help").say("s1", "helping", usage=usage())
    for rec, body in (record(main.body()), record(sub.body(), "helper1",
                                                  spawn_tool_use_id="tu_1", spawn_depth=1)):
        rec.root_commit = sha
        (lane.records / rec.name).write_bytes(format_record(rec, body))
    app, history = typer.Typer(), typer.Typer()
    app.add_typer(history, name="history")
    command.register(app=app, history=history, daemon=typer.Typer())
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, ["history", "reconstruct", *args])

    invoke.lane = lane
    return invoke


def test_reconstruct_writes_both_files(cli, tmp_path):
    out = tmp_path / "scratch"
    out.mkdir()
    result = cli(SESSION, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    artefact, telemetry = out / f"{SESSION}.md", out / f"{SESSION}.telemetry.json"
    assert sorted(os.listdir(out)) == sorted([artefact.name, telemetry.name])
    for path in (artefact, telemetry):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # transcript text: owner-only
    expected = reconstruct(cli.lane, ReconstructOptions(session_id=SESSION, max_block_bytes=8192),
                           now_ns=1)
    assert artefact.read_bytes() == expected.artefact
    assert b"\x1b[31m" in artefact.read_bytes()  # the file keeps the transcript verbatim
    data = json.loads(telemetry.read_text())
    assert data["session_id"] == SESSION and data["tokens"]["api_responses"] == 3
    lines = result.stdout.splitlines()
    assert lines[0] == f"abcd history reconstruct — session {SESSION} (full mode)"
    assert f"wrote:      ~/scratch/{SESSION}.md" in result.stdout
    assert f"~/scratch/{SESSION}.telemetry.json" in result.stdout
    assert "agents:     2 (1 sub-agent(s); 1 placed" in result.stdout
    assert "tool calls: Task 1" in result.stdout


def test_reconstruct_to_stdout_writes_no_files(cli, repo):
    before = sorted(os.listdir(repo[0]))
    result = cli(SESSION, "--out", "-", "--mode", "spine")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(repo[0])) == before
    out = result.stdout
    assert out.startswith(f"# Session {SESSION}\n")
    assert "- mode: spine" in out
    assert "\x1b" not in out and "\u241b[31mred" in out  # terminal-safe
    head, tail = out.split(f"\n<!-- {SESSION}.telemetry.json -->\n\n", 1)
    assert tail.startswith("```json\n{") and tail.endswith("}\n```\n")
    assert json.loads(tail[len("```json\n"):-len("```\n")])["mode"] == "spine"


def test_reconstruct_json_envelope_carries_the_telemetry(cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    written = json.loads(cli(SESSION, "--out", str(out), "--json").stdout)
    assert set(written) == {"artefact_name", "telemetry_name", "artefact_bytes", "telemetry",
                            "written"}
    assert written["written"] == [f"~/out/{SESSION}.md", f"~/out/{SESSION}.telemetry.json"]
    assert written["telemetry"]["completeness"]["agents_total"] == 2
    assert written["artefact_bytes"] == (out / f"{SESSION}.md").stat().st_size
    printed = json.loads(cli(SESSION, "--out", "-", "--json").stdout)
    assert "written" not in printed
    assert printed["artefact"].startswith(f"# Session {SESSION}")
    assert printed["telemetry"]["session_id"] == SESSION


def test_reconstruct_refuses_an_absent_out_directory(cli, tmp_path):
    missing = tmp_path / "nowhere"
    result = cli(SESSION, "--out", str(missing))
    assert result.exit_code == 2
    assert "--out ~/nowhere is not an existing directory" in result.stderr
    assert not missing.exists()
    as_json = cli(SESSION, "--out", str(missing), "--json")
    assert json.loads(as_json.stdout)["error"]["kind"] == "InputError"


def test_reconstruct_refuses_an_unknown_session(cli, tmp_path):
    result = cli("no-such-session", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert 'no records for session "no-such-session"' in result.stderr
    assert not list(tmp_path.glob("no-such-session*"))


@pytest.mark.parametrize("args, message", [
    (("--max-block-bytes", "-1"), "negative"),
    (("--mode", "tree"), 'reconstruct mode "tree" is not one of full, spine'),
])
def test_reconstruct_refuses_a_bad_option(cli, tmp_path, args, message):
    result = cli(SESSION, "--out", str(tmp_path), *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not list(tmp_path.glob(f"{SESSION}*"))


def test_reconstruct_writes_both_files_or_neither(cli, tmp_path):
    out = tmp_path / "out"
    (out / f"{SESSION}.telemetry.json").mkdir(parents=True)  # the second write must fail
    result = cli(SESSION, "--out", str(out))
    assert result.exit_code == 1
    assert "neither file is there" in result.stderr
    assert not (out / f"{SESSION}.md").exists()


def test_the_abcd_command_runs_reconstruct(cli, repo):
    abcd = Path(sys.executable).with_name("abcd")
    done = subprocess.run([str(abcd), "history", "reconstruct", SESSION, "--out", "-"],
                          cwd=repo[0], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert f"<!-- {SESSION}.telemetry.json -->" in done.stdout


def _reconstruct_into(out: Path, repo_path: Path):
    abcd = Path(sys.executable).with_name("abcd")
    return subprocess.run([str(abcd), "history", "reconstruct", SESSION, "--out", str(out)],
                          cwd=repo_path, capture_output=True, text=True, env=dict(os.environ))


def test_files_written_inside_a_work_tree_and_not_ignored_are_named_with_how_to_ignore(cli, repo):
    out = repo[0] / "review"
    out.mkdir()
    done = _reconstruct_into(out, repo[0])
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stderr.splitlines() if "not ignored" in ln]
    assert len(warnings) == 2  # one line per file
    assert warnings[0].startswith(f"abcd: ~/repo/review/{SESSION}.md is inside a git work tree")
    assert f"echo '/review/{SESSION}.md' >> ~/repo/.git/info/exclude" in warnings[0]
    assert f"{SESSION}.telemetry.json" in warnings[1]
    for path in out.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # Following the advice silences it: git itself now ignores both files.
    exclude = repo[0] / ".git" / "info" / "exclude"
    with open(exclude, "a") as f:
        f.write(f"/review/{SESSION}.md\n")
    (repo[0] / ".gitignore").write_text("*.telemetry.json\n")  # any ignore source counts
    done = _reconstruct_into(out, repo[0])
    assert done.returncode == 0 and "not ignored" not in done.stderr, done.stderr


def test_files_written_outside_any_work_tree_draw_no_warning(cli, repo, tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    done = _reconstruct_into(out, repo[0])
    assert done.returncode == 0 and "not ignored" not in done.stderr, done.stderr


@pytest.mark.slow
def test_the_daemon_serves_the_same_reconstruction(repo, tmp_path):
    import msgspec

    from abcd_client.connect import connect
    from abcd_daemon.reconstruct import Telemetry
    from abcd_daemon.wire import messages as m

    from ..daemon.procs import DaemonProc, env_for

    env = env_for(tmp_path / "d")
    lane = Lane(Home(env["ABCD_HOME"]), repo[1]).ensure("records")
    main = (CC().user("served").assistant("m1", tool_use("tu_1", "Task"), usage=usage())
            .result("tu_1", "ok"))
    sub = CC(agent_id="served1").user("x").say("s1", "y", usage=usage())
    for rec, body in (record(main.body()), record(sub.body(), "served1",
                                                  spawn_tool_use_id="tu_1", spawn_depth=1)):
        rec.root_commit = repo[1]
        (lane.records / rec.name).write_bytes(format_record(rec, body))
    daemon = DaemonProc(env, tmp_path / "daemon.log").wait_ready()
    try:
        with connect(env["ABCD_SOCKET"]) as client:
            head = client.request(m.ReconstructRequest(root_sha=repo[1], session_id=SESSION,
                                                       mode="spine", max_block_bytes=64))
            artefact = client.body()
        local = reconstruct(lane, ReconstructOptions(session_id=SESSION, mode="spine",
                                                     max_block_bytes=64), now_ns=1)
        assert artefact == local.artefact and head.artefact_bytes == local.artefact_bytes
        served = msgspec.json.decode(head.telemetry_json, type=Telemetry)
        served.generated_at = local.telemetry.generated_at
        assert served == local.telemetry
        out = tmp_path / "out"
        out.mkdir()
        done = subprocess.run([str(Path(sys.executable).with_name("abcd")), "history",
                               "reconstruct", SESSION, "--out", str(out), "--json"],
                              cwd=repo[0], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert (out / f"{SESSION}.md").read_bytes() == reconstruct(
            lane, ReconstructOptions(session_id=SESSION, max_block_bytes=8192),
            now_ns=1).artefact
    finally:
        assert daemon.stop() == 0, daemon.read_log()


def test_a_record_over_64_mib_reconstructs_whole_through_the_cli(cli, tmp_path):
    """Issue 16: a body larger than the old 64 MiB read cap is read lean and written as
    it is rendered — every turn is in the artefact, the record is not dropped, and only
    the two files are left in --out."""
    big = SESSION.replace("0000", "b16b", 1)
    turns = 1400  # x ~50 kB = ~70 MB of body
    cc = CC(session=big)
    for i in range(turns):
        cc.user(f"question {i} " + "q" * 25000).say(f"m{i}", f"answer {i} " + "a" * 25000,
                                                    usage=usage())
    rec, body = record(cc.body(), session=big)
    rec.root_commit = cli.lane.root_sha
    assert len(body) > 64 << 20
    (cli.lane.records / rec.name).write_bytes(format_record(rec, body))
    del body, cc
    out = tmp_path / "bigout"
    out.mkdir()
    result = cli(big, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(out)) == [f"{big}.md", f"{big}.telemetry.json"]
    telemetry = json.loads((out / f"{big}.telemetry.json").read_text())
    assert telemetry["completeness"].get("dropped_records", []) == []
    assert telemetry["turns"]["total"] == 2 * turns
    with open(out / f"{big}.md", "rb") as f:
        headings = sum(line.startswith(b"### Turn ") for line in f)
    assert headings == 2 * turns
    assert (out / f"{big}.md").stat().st_size > 64 << 20
