"""The daemon-served read verbs run without typer (:mod:`abcd_client.quick`): the quick
reader takes exactly the options typer declares (or names those it leaves to typer),
reads every command line it accepts to the same values typer would, hands everything
else to typer, and a verb prints and exits the same under either
(``test_quick_served.py``: with a real daemon, and without one)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from abcd_client import quick
from abcd_client.commands import search as search_mod
from abcd_client.commands import usage as usage_mod


def body(path: tuple[str, ...]):
    module, function = quick.VERBS[path][:2]
    return getattr(importlib.import_module(f"abcd_client.commands.{module}"), function)


def typer_command(path: tuple[str, ...]):
    """The click command typer builds for ``path``, on a fresh app."""
    app, history, daemon = typer.Typer(), typer.Typer(), typer.Typer()
    for sub in (app, history, daemon):
        sub.command("__unused")(lambda: None)  # a group, as in the real tree
    app.add_typer(history, name="history")
    app.add_typer(daemon, name="daemon")
    importlib.import_module(f"abcd_client.commands.{quick.VERBS[path][0]}").register(
        app=app, history=history, daemon=daemon)
    command = typer.main.get_command(app)
    for word in path:
        command = command.commands[word]
    return command


def typer_values(argv: list[str]) -> dict:
    path, _ = quick.parse(argv)
    params = typer_command(path).make_context(path[-1], list(argv[len(path):])).params
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}


def quick_values(argv: list[str]) -> dict:
    path, given = quick.parse(argv)
    defaults = {name: p.default for name, p in inspect.signature(body(path)).parameters.items()
                if p.default is not inspect.Parameter.empty}
    return {**defaults, **given}


def test_the_quick_reader_knows_exactly_the_options_and_arguments_typer_declares():
    for path, (_module, _function, positionals, options, typer_only) in quick.VERBS.items():
        command = typer_command(path)
        declared = {}
        arguments = []
        for param in command.params:
            if param.param_type_name == "argument":
                arguments.append((param.name, param.required, param.nargs))
                continue
            if param.name == "help":
                continue
            [flag] = param.opts
            kind = quick.FLAG if param.is_flag else quick.TEXT
            if getattr(param.type, "min", None) is not None:
                kind = (param.type.min, param.type.max)
            elif type(param.type).__name__ == "IntParamType":
                kind = quick.INT
            declared[flag] = (param.name, kind)
        for flag in typer_only:  # typer declares each one it alone reads
            assert declared.pop(flag, None) is not None, (path, flag)
        assert declared == options, path
        assert tuple(arguments) == positionals, path


@pytest.mark.parametrize("argv", [
    ["search", "needle"],
    ["search", "needle", "--all-repos", "--json"],
    ["search", "--json", '"a phrase"', "--limit", "7", "--role", "tool", "--tool", "Bash"],
    ["search", "pre*", "--session=abc123", "--agent-type", "Explore", "--since", "7d", "--until=2026-11-30"],
    ["search", "x", "--limit", "1000", "--limit", "3"],  # the last one counts, as in click
    ["search", "x", "--since="],
    ["usage"],
    ["usage", "weekly", "--breakdown", "--all-repos"],
    ["usage", "--json", "agent-type", "--since", "36h"],
    ["history", "list"], ["history", "list", "--session", "5e55b0", "--json"], ["history", "list", "--session="],
    ["history", "show", "5e55b0a1"], ["history", "show", "--json", "rec.md"],
    ["history", "staged"], ["history", "staged", "--all-repos", "--json"],
    ["daemon", "status"], ["daemon", "status", "--json"],
    ["history", "reconstruct", "5e55b0a1"],
    ["history", "reconstruct", "5e55b0a1", "--out", "-", "--json"],
    ["history", "reconstruct", "--out=out", "5e55b0a1", "--mode", "spine", "--max-block-bytes", "0"],
])
def test_a_command_line_both_read_gives_the_same_values(argv):
    assert quick_values(argv) == typer_values(argv)


@pytest.mark.parametrize("argv", [
    [], ["--version"], ["history", "lst"], ["index", "rebuild"],
    ["search"], ["search", "--help"], ["search", "x", "-h"], ["search", "x", "--bogus"],
    ["search", "x", "--limit"], ["search", "x", "--limit", "0"], ["search", "x", "--limit", "1001"],
    ["search", "x", "--limit", "ten"], ["search", "x", "--role", "-y"], ["search", "--", "-x"],
    ["search", "x", "y"], ["search", "x", "--json=yes"], ["usage", "daily", "weekly"],
    ["usage", "--since"], ["usage", "--all"],
    ["history"], ["history", "--help"], ["history", "list", "--help"], ["history", "list", "extra"],
    ["history", "list", "--session"], ["history", "list", "--all-repos"], ["history", "drain"],
    ["history", "show"], ["history", "show", "a", "b"], ["history", "staged", "--json=1"],
    ["daemon", "status", "-h"], ["daemon", "stop"], ["daemon"],
    ["history", "reconstruct"], ["history", "reconstruct", "a", "b"], ["history", "reconstruct", "--all"],
    ["history", "reconstruct", "a", "--all-repos"], ["history", "reconstruct", "a", "--format", "md"],
    ["history", "reconstruct", "a", "--max-block-bytes", "-1"],
    ["history", "reconstruct", "a", "--max-block-bytes", "8k"], ["history", "reconstruct", "a", "--out", "-x"],
])
def test_anything_else_goes_to_typer(argv):
    assert quick.parse(argv) is None


def _run_quick(argv: list[str], env: dict) -> tuple[int, str, str]:
    res = subprocess.run([sys.executable, "-m", "abcd_client", *argv], env=env, capture_output=True,
                         text=True, timeout=120)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.parametrize("argv", [
    ["search", "needle", "--all-repos", "--json"],
    ["search", "needle", "--all-repos"],
    ["search", "needle", "--all-repos", "--role", "nobody", "--json"],
    ["search", "needle", "--all-repos", "--since", "yesterday-ish"],
    ["usage", "fortnightly", "--all-repos", "--json"],
    ["usage", "daily", "--all-repos"],
    ["search", "needle", "--json"],  # outside a checkout
])
def test_a_verb_prints_and_exits_the_same_run_quick_or_through_typer(argv, tmp_path, monkeypatch):
    env = dict(os.environ, ABCD_HOME=str(tmp_path / "home"), ABCD_LOCAL="1")
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for key in ("ABCD_HOME", "ABCD_LOCAL"):
        monkeypatch.setenv(key, env[key])
    assert quick.parse(argv) is not None
    code, out, err = _run_quick(argv, env)
    app = typer.Typer()
    app.command("__unused")(lambda: None)
    {"search": search_mod, "usage": usage_mod}[argv[0]].register(app=app, history=typer.Typer(),
                                                                 daemon=typer.Typer())
    through_typer = CliRunner().invoke(app, argv)
    assert (code, out, err) == (through_typer.exit_code, through_typer.stdout, through_typer.stderr)
    if "--json" in argv:
        json.loads(out)  # one document, error or not
