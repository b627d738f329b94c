"""The CLI starts by importing only what the verb on its command line needs: the verb
index agrees with what the command modules register, help stays complete, and a served
verb never loads rich, pydantic, trio, the scanner, the reconstruct core or SQLite — and a
served ``search`` or ``usage`` not even typer (:mod:`abcd_client.quick`)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import typer

from abcd_client import quick
from abcd_client.commands import NAMES, VERBS, modules_for

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for


def registered_by(name: str) -> set[tuple[str, ...]]:
    """The command paths module ``name`` registers, on fresh apps."""
    app, history, daemon = typer.Typer(), typer.Typer(), typer.Typer()
    importlib.import_module(f"abcd_client.commands.{name}").register(app=app, history=history,
                                                                     daemon=daemon)
    paths = set()
    groups = [((), app), (("history",), history), (("daemon",), daemon)]
    # a module may add its own group (``abcd index …``)
    groups += [((g.name,), g.typer_instance) for g in app.registered_groups]
    for group, sub in groups:
        for info in sub.registered_commands:
            paths.add(group + (info.name or info.callback.__name__,))
    return paths


def test_the_verb_index_names_every_registered_verb_and_the_module_that_defines_it():
    actual = {path: name for name in NAMES for path in registered_by(name)}
    assert actual == VERBS


def test_a_command_line_needs_only_its_verbs_module_and_a_help_screen_every_one_it_lists():
    assert modules_for(["history", "list", "--json"]) == ("store",)
    assert modules_for(["--json", "history", "reconstruct", "x"]) == ("reconstruct",)
    assert set(modules_for(["history", "--help"])) == {m for p, m in VERBS.items() if p[0] == "history"}
    assert set(modules_for(["daemon"])) == {"daemon"}
    assert set(modules_for(["--help"])) == {"daemon", "redact", "search", "usage", "view"}  # hook, redact, search, usage, view
    assert modules_for(["histroy", "list"]) == NAMES  # click's suggestion sees every verb


def test_help_lists_every_verb_of_a_group_and_a_mistyped_one_gets_a_suggestion():
    abcd = [sys.executable, "-m", "abcd_client"]
    shown = subprocess.run(abcd + ["history", "--help"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    for path in VERBS:
        if path[0] == "history":
            assert f"  {path[1]} " in shown.stdout, path
    typo = subprocess.run(abcd + ["history", "lst"], capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2 and "Did you mean 'list'?" in typo.stderr


_PROBE = """
import sys, io, contextlib, json
sys.argv = ["abcd"] + json.loads(sys.argv[1])
from abcd_client.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
_NEVER = ("rich", "pydantic", "trio", "abcd_daemon.scanner", "abcd_daemon.reconstruct.api",
          "abcd_daemon.reconstruct.render", "abcd_daemon.intake.take", "abcd_daemon.queue.drain",
          "abcd_daemon.store.capture", "abcd_daemon.config", "sqlite3", "abcd_daemon.index.db",
          "abcd_daemon.index.query", "abcd_daemon.index.usage")
#: what a verb the fast path serves does not load either: its command line is read
#: without typer (:mod:`abcd_client.quick`), msgspec without typing_extensions (nor the
#: inspect it imports), the socket through the C type, not socket.py
_NEVER_QUICK = ("typer", "click", "abcd_client.app", "typing_extensions", "inspect", "socket")


def loaded(args: list[str], env, cwd) -> list[str]:
    """The modules loaded by running ``args`` (which succeeds, or — for a ``nosuch``
    record or session — is refused by the daemon)."""
    res = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=60)
    result = json.loads(res.stdout.splitlines()[-1])
    assert result["code"] in ((1,) if "nosuch" in args else (0, None)), res.stderr
    return result["modules"]


def test_served_verbs_and_help_load_none_of_the_heavy_modules(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    make_repo(repo)
    out = tmp_path / "out"
    out.mkdir()
    help_modules = loaded(["--help"], env, repo)
    assert "msgspec" not in help_modules and "rich" not in help_modules
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        for args in (["history", "list"], ["history", "staged"], ["daemon", "status"],
                     ["history", "staged", "--all-repos", "--json"], ["history", "show", "nosuch"],
                     ["history", "reconstruct", "--all", "--out", str(out)],
                     ["history", "reconstruct", "nosuch", "--out", str(out)],
                     ["search", "anything", "--json"], ["usage", "daily", "--json"],
                     ["search", "anything"], ["usage", "agent-type", "--breakdown"]):
            modules = loaded(args, env, repo)
            never = _NEVER + (_NEVER_QUICK if quick.parse(args) else ())
            heavy = [m for m in modules if any(m == n or m.startswith(n + ".") for n in never)]
            assert heavy == [], (args, heavy)
    finally:
        assert daemon.stop() == 0
