"""Each fast-path verb (:mod:`abcd_client.quick`) against a real daemon prints, writes
and exits byte for byte as the typer path does — a daemon's refusal included — without
loading typer; with no daemon to answer (none running, ``ABCD_LOCAL=1``) the command
line falls through to typer, which works in-process, and the output is still the
typer path's."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, wait_for
from .test_batch_reconstruct import store_session

SESSION = "11aa22bb-0001-4000-8000-000000000001"

#: Runs a command line the way ``abcd`` does (``via`` "cli": fast path first) or through
#: typer alone ("typer"); reports whether typer and msgspec were loaded, on the last line
#: of stderr.
_RUN = """
import json, sys
via, args = sys.argv[1], json.loads(sys.argv[2])
sys.argv = ["abcd", *args]
if via == "cli":
    from abcd_client.cli import main
else:
    from abcd_client.app import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "typer": "typer" in sys.modules, "msgspec": "msgspec" in sys.modules}))
"""

#: What differs between two runs of the same verb: the clock (a stamp, the uptime).
_CLOCK = [(re.compile(rb'"(\w+_at)": "\d{4}-[^"]*"'), rb'"\1": "T"'),
          (re.compile(rb'"uptime_s": [0-9.e+-]+'), b'"uptime_s": 0'),
          (re.compile(rb"up [0-9]+s\)"), b"up 0s)")]


def _run(via: str, args: list[str], env: dict, cwd, loaded: list | None = None) -> tuple[int, bytes, bytes, bool]:
    res = subprocess.run([sys.executable, "-c", _RUN, via, json.dumps(args)], env=env, cwd=cwd,
                         capture_output=True, timeout=120)
    err, _, last = res.stderr.rpartition(b"\n") if b"\n" in res.stderr else (b"", b"", res.stderr)
    result = json.loads(last)
    if loaded is not None:
        loaded.append(result["msgspec"])
    out = res.stdout
    for pattern, fixed in _CLOCK:
        out = pattern.sub(fixed, out)
    return result["code"], out, err, result["typer"]


def _both(args: list[str], env: dict, cwd, out_dir=None) -> tuple[tuple, tuple]:
    """(the ``abcd`` run, the typer run) of ``args``, each (code, stdout, stderr, typer
    loaded, files written into ``out_dir``), the files removed after each run."""
    runs = []
    for via in ("cli", "typer"):
        code, out, err, typer_loaded = _run(via, args, env, cwd)
        files = {}
        if out_dir is not None:
            for path in sorted(out_dir.iterdir()):
                data = path.read_bytes()
                for pattern, fixed in _CLOCK:
                    data = pattern.sub(fixed, data)
                files[path.name] = data
                path.unlink()
        runs.append((code, out, err, typer_loaded, files))
    return runs[0], runs[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A repository with one stored session (a main thread, one sub-agent), an empty
    ``out`` directory, and a daemon serving its store."""
    base = tmp_path_factory.mktemp("quick-served")
    env = env_for(base)
    repo = base / "repo"
    sha = make_repo(repo)
    store_session(Lane(Home(env["ABCD_HOME"]), sha).ensure("records"), SESSION, 0)
    (base / "out").mkdir()
    daemon = DaemonProc(env, base / "d.log").wait_ready()
    # The daemon's start-up survey (the catch-up and the missing-transcript count) ends
    # after it answers; two runs of `daemon status` compared across its end would differ.
    wait_for(lambda: _survey_done(env, repo), timeout=60.0, what="the daemon's start-up survey")
    yield env, repo, base / "out"
    assert daemon.stop() == 0


def _survey_done(env: dict, repo) -> bool:
    code, out, _err, _typer = _run("cli", ["daemon", "status", "--json"], env, repo)
    return code == 0 and json.loads(out).get("missing") is not None


VERB_LINES = [
    ["history", "list"], ["history", "list", "--json"], ["history", "list", "--session", SESSION[:8]],
    ["history", "show", SESSION], ["history", "show", SESSION, "--json"],
    ["history", "staged"], ["history", "staged", "--json"], ["history", "staged", "--all-repos"],
    ["daemon", "status"], ["daemon", "status", "--json"],
    ["history", "reconstruct", SESSION, "--out", "-"],
    ["history", "reconstruct", SESSION[:8], "--out", "-", "--json", "--mode", "spine"],
    ["search", "helping", "--json"], ["search", "helping"], ["search", '"to help"', "--all-repos"],
    ["search", "help*", "--role", "assistant", "--json"], ["search", "zzzznothing"],
]
#: refusals: the daemon's (an unknown record or session) and the verb's own (bad input)
REFUSALS = [
    ["history", "show", "nosuch-record"], ["history", "show", "nosuch-record", "--json"],
    ["history", "reconstruct", "99999999-dead", "--out", "-"],
    ["history", "reconstruct", SESSION, "--out", "-", "--mode", "sideways"],
    ["history", "reconstruct", SESSION, "--out", "no-such-dir"],
    ["search", "helping", "--role", "bogus"], ["search", "helping", "--role", "bogus", "--json"],
    ["search", "helping", "--since", "yesterday-ish"],
    ["search", "caf\udce9"], ["search", "helping", "--tool", "B\udcff", "--json"],  # bytes not UTF-8
]


@pytest.mark.parametrize("args", VERB_LINES + REFUSALS)
def test_a_served_verb_prints_and_exits_byte_for_byte_as_typer_does_without_loading_typer(args, served):
    env, repo, _out = served
    fast, through_typer = _both(args, env, repo)
    assert fast[3] is False and through_typer[3] is True  # the fast path ran, typer did not
    assert fast[:3] == through_typer[:3]
    if args in VERB_LINES:
        assert fast[0] == 0 and fast[1], args  # done, and printed (not two nothings compared)
    else:
        assert fast[0] in (1, 2) and fast[2], args  # refused, saying why on stderr


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_served_reconstruct_into_out_writes_the_same_files_as_typer_does(extra, served):
    env, repo, out = served
    fast, through_typer = _both(["history", "reconstruct", SESSION, "--out", str(out), *extra],
                                env, repo, out_dir=out)
    assert fast[3] is False and through_typer[3] is True
    assert fast[0] == 0 and sorted(fast[4]) == [f"{SESSION}.md", f"{SESSION}.telemetry.json"]
    assert fast[:3] == through_typer[:3] and fast[4] == through_typer[4]


@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("args", [
    ["history", "list"], ["history", "show", SESSION], ["history", "staged", "--json"],
    ["daemon", "status"], ["history", "reconstruct", SESSION, "--out", "-"],
    ["search", "helping", "--json"],
])
def test_with_no_daemon_to_answer_the_command_line_falls_through_to_typer(args, local, tmp_path):
    env = env_for(tmp_path, **({"ABCD_LOCAL": "1"} if local else {}))
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    store_session(Lane(Home(env["ABCD_HOME"]), sha).ensure("records"), SESSION, 0)
    fast, through_typer = _both(args, env, repo)
    assert fast[3] is True  # no daemon answered: typer ran the verb
    assert fast[:3] == through_typer[:3] and fast[1], args


def test_a_daemon_of_another_store_is_not_used_and_the_note_saying_so_is_printed_once(served, tmp_path):
    env, repo, _out = served
    elsewhere = dict(env, ABCD_HOME=str(tmp_path / "other-home"))  # same socket, other store
    fast, through_typer = _both(["history", "list"], elsewhere, repo)
    assert fast[3] is True  # fell through: typer worked in-process on this store
    assert fast[:3] == through_typer[:3]
    assert fast[2].count(b"working in-process") == 1


SEARCHES = [args for args in VERB_LINES + REFUSALS if args[0] == "search"]


@pytest.mark.parametrize("args", SEARCHES)
def test_a_served_search_imports_no_msgspec_and_prints_what_an_in_process_one_prints(args, served):
    env, repo, _out = served
    loaded: list = []
    fast = _run("cli", args, env, repo, loaded)
    in_process = _run("cli", args, dict(env, ABCD_LOCAL="1"), repo)
    assert loaded == [False]  # served over the JSON wire: msgspec never imported
    assert fast[:3] == in_process[:3]
    assert fast[0] == 0 or (fast[0] == 2 and fast[2]), args
