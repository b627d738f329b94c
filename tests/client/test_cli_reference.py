"""The command reference never drifts from the program.

``docs/cli.md`` is generated from the typer app by ``tools/gen_cli_reference.py``. These
tests regenerate it in memory and compare: first as sets of (command path, flag or
argument) pairs, both ways, so a failure names exactly which verb or flag drifted; then
byte for byte, so help texts and defaults cannot drift either.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gen_cli_reference.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("gen_cli_reference", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


gen = _load_tool()
HOW = f"regenerate the reference: `{gen.REGENERATE}` (then commit docs/cli.md)"


@pytest.fixture(scope="module")
def commands():
    return gen.walk()


@pytest.fixture(scope="module")
def committed() -> str:
    assert gen.DOC.exists(), f"docs/cli.md is missing; {HOW}"
    return gen.DOC.read_text(encoding="utf-8")


def _show(pairs) -> str:
    return "\n".join(f"  {path} {name or '(the command itself)'}" for path, name in sorted(pairs))


def test_every_verb_and_flag_of_the_program_is_in_the_reference(commands, committed):
    """Nothing the CLI accepts is missing from docs/cli.md."""
    missing = gen.surface_of_app(commands) - gen.surface_of_markdown(committed)
    assert not missing, f"in the CLI but not in docs/cli.md:\n{_show(missing)}\n{HOW}"


def test_the_reference_names_nothing_the_program_lacks(commands, committed):
    """Nothing in docs/cli.md is gone from the CLI."""
    stale = gen.surface_of_markdown(committed) - gen.surface_of_app(commands)
    assert not stale, f"in docs/cli.md but not in the CLI:\n{_show(stale)}\n{HOW}"


def test_the_reference_is_exactly_what_the_generator_writes(commands, committed):
    """Help texts, usage lines and defaults match too."""
    assert gen.render(commands) == committed, f"docs/cli.md is stale; {HOW}"


def test_the_generator_is_deterministic(commands):
    assert gen.render(gen.walk()) == gen.render(commands)


def test_the_reference_covers_the_documented_surface(commands):
    """The verbs DESIGN §3.9 names are all there, and every verb but `hook` and the
    groups takes --json."""
    paths = {c.path for c in commands}
    for verb in ("history list", "history show", "history reconstruct", "history staged",
                 "history drain", "history discard", "history ingest", "daemon run",
                 "daemon status", "daemon install", "daemon uninstall", "hook"):
        assert f"abcd {verb}" in paths
    surface = gen.surface_of_app(commands)
    leaves = [c.path for c in commands if not c.subcommands and c.path not in ("abcd hook", "abcd daemon run")]
    assert [p for p in leaves if (p, "--json") not in surface] == []


def test_the_reference_reads_back_every_pair_it_renders(commands):
    """The parser the drift tests rely on sees every (command, flag) the renderer wrote."""
    assert gen.surface_of_markdown(gen.render(commands)) == gen.surface_of_app(commands)


def test_a_flag_added_to_the_program_is_reported_as_missing(commands, committed):
    """Drift detection works: a new option on one verb shows up as exactly that pair."""
    target = next(c for c in commands if c.path == "abcd history list")
    extra = gen.Param(kind="option", names=("--since-yesterday",), value="", default="off",
                      required=False, help="new")
    changed = [dataclasses.replace(c, params=c.params + (extra,)) if c is target else c
               for c in commands]
    assert gen.surface_of_app(changed) - gen.surface_of_markdown(committed) == {
        ("abcd history list", "--since-yesterday")}


def test_a_verb_removed_from_the_program_is_reported_as_stale(commands, committed):
    """Drift detection works the other way: a vanished verb leaves stale pairs."""
    kept = [c for c in commands if c.path != "abcd history drain"]
    stale = gen.surface_of_markdown(committed) - gen.surface_of_app(kept)
    assert ("abcd history drain", gen.COMMAND) in stale and ("abcd history drain", "--max-bytes") in stale
