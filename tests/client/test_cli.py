"""The ``abcd`` program as a whole: its version, and every command it tells a user to
run — in an error hint, a notice, a docstring or the README — is one that exists."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
from pathlib import Path

from abcd_daemon import __version__

from .conftest import ABCD
from .test_cli_reference import gen

ROOT = Path(__file__).resolve().parents[2]
#: A command the text tells a user to run: `abcd <word> <word>…` inside backticks.
COMMAND = re.compile(r"`abcd ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)")


def _paths() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Every command path of the program (without ``abcd``) → its sub-commands."""
    return {tuple(c.path.split()[1:]): c.subcommands for c in gen.walk()}


def _exists(paths, words: list[str]) -> bool:
    """True when ``words`` names a command: the longest prefix that is a command path
    is a verb (the rest are its arguments) or is the whole of ``words``."""
    for cut in range(len(words), 0, -1):
        prefix = tuple(words[:cut])
        if prefix in paths:
            return cut == len(words) or not paths[prefix]
    return False


def test_version_prints_the_one_version_abcd_has():
    res = subprocess.run([str(ABCD), "--version"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout == f"abcd {__version__}\n"
    assert importlib.metadata.version("abcd") == __version__  # pyproject reads the same


def test_every_command_abcd_tells_a_user_to_run_exists():
    program = _paths()
    sources = [*ROOT.glob("abcd_daemon/**/*.py"), *ROOT.glob("abcd_client/**/*.py"),
               ROOT / "hooks" / "abcd-hook", ROOT / "README.md", *ROOT.glob("docs/*.md")]
    named = {}
    for path in sources:
        for match in COMMAND.finditer(path.read_text()):
            named.setdefault(match[1], str(path.relative_to(ROOT)))
    assert len(named) > 10  # the scan finds the hints at all
    missing = {cmd: where for cmd, where in named.items() if not _exists(program, cmd.split())}
    assert missing == {}, f"commands named that abcd does not have: {missing}"


def test_the_check_knows_a_verb_that_does_not_exist():
    program = _paths()
    assert not _exists(program, ["daemon", "restart"])
    assert _exists(program, ["daemon", "stop"]) and _exists(program, ["history", "retry"])
    assert _exists(program, ["history", "discard", "entry"])  # arguments after the verb
