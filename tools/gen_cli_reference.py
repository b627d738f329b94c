#!/usr/bin/env python3
"""Generate ``docs/cli.md``, the command reference, from the typer app itself.

Usage (from the repository root)::

    .venv/bin/python tools/gen_cli_reference.py           # rewrite docs/cli.md
    .venv/bin/python tools/gen_cli_reference.py --check   # exit 1 if docs/cli.md is stale

The reference is built by walking the click command tree typer builds for
``abcd_client.app.app`` (after the verbs register): one section per command path
(``abcd history reconstruct``), with its help text, usage line, arguments and every
option (names, value, default, help) including ``--help``. Output is deterministic:
sub-commands sorted by name, parameters in declaration order, no timestamp, and a
fixed formatter width (the caller's terminal size never wraps a usage line).

``surface_of_app`` and ``surface_of_markdown`` reduce the program and a reference to
the same set of (command path, flag-or-argument) pairs, so a test can say exactly what
drifted (``tests/client/test_cli_reference.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "cli.md"
REGENERATE = ".venv/bin/python tools/gen_cli_reference.py"
WIDTH = 10_000
COMMAND = ""  # a pair (path, COMMAND) says the command itself exists


@dataclasses.dataclass(frozen=True)
class Param:
    """One documented argument or option."""

    kind: str  # "argument" | "option"
    names: tuple[str, ...]  # option flags, or the argument's metavar
    value: str  # what the option takes ("" for a flag)
    default: str
    required: bool
    help: str


@dataclasses.dataclass(frozen=True)
class Command:
    """One command path of the tree, with what its help screen says."""

    path: str
    help: str
    usage: str
    params: tuple[Param, ...]
    subcommands: tuple[str, ...]


# -- walking the program ---------------------------------------------------------------

def root_command():
    """The click command typer builds for ``abcd`` (verbs registered once)."""
    import typer.main

    from abcd_client import app as cli

    if not cli.history_app.registered_commands:  # register once per process
        cli._register()
    return typer.main.get_command(cli.app)


def walk(command=None, path: tuple[str, ...] = ("abcd",), parent=None) -> list[Command]:
    """Every command of the tree, depth first, sub-commands sorted by name."""
    command = root_command() if command is None else command
    # A fixed, generous width: the usage line must not wrap with the caller's terminal.
    ctx = command.context_class(command, info_name=path[-1], parent=parent,
                                terminal_width=WIDTH, max_content_width=WIDTH)
    children = getattr(command, "commands", {}) or {}
    out = [describe(command, ctx, path, tuple(sorted(children)))]
    for name in sorted(children):
        out += walk(children[name], path + (name,), ctx)
    return out


def describe(command, ctx, path: tuple[str, ...], subcommands: tuple[str, ...]) -> Command:
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        params.append(help_option)
    usage = " ".join(command.get_usage(ctx).removeprefix("Usage:").split())  # the full path
    return Command(path=" ".join(path), help=clean_help(command.help or command.short_help or ""),
                   usage=usage, params=tuple(describe_param(p, ctx) for p in params),
                   subcommands=subcommands)


def describe_param(param, ctx) -> Param:
    is_option = getattr(param, "param_type_name", "") == "option"
    if is_option:
        names = tuple(param.opts) + tuple(param.secondary_opts)
        value = "" if getattr(param, "is_flag", False) else _value(param, ctx, names)
    else:
        names = (param.metavar or param.name,)
        value = _value(param, ctx, names)
    return Param(kind="option" if is_option else "argument", names=names, value=value,
                 default=_default(param), required=bool(param.required),
                 help=clean_help(getattr(param, "help", "") or ""))


def _value(param, ctx, names: tuple[str, ...]) -> str:
    """What the parameter takes, as its help screen shows it (``DIR|-``, ``<int>``)."""
    record = param.get_help_record(ctx) if hasattr(param, "get_help_record") else None
    if record:
        shown = record[0]
        for name in sorted(names, key=len, reverse=True):
            shown = shown.replace(name, "", 1)
        shown = shown.strip(" ,.")
        if shown:
            return shown
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return f"<{getattr(annotation, '__name__', annotation)}>" if annotation else ""


def _default(param) -> str:
    if param.required:
        return ""
    default = param.default
    if callable(default):
        return "(computed)"
    if getattr(param, "is_flag", False):
        return "off" if not default else "on"
    if default is None:
        return ""
    if default == "":
        return '""'
    return str(default)


def clean_help(text: str) -> str:
    """Help text as paragraphs: a docstring's hard line breaks are joined."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()).strip()
                       for p in paragraphs if p.strip())


# -- rendering -------------------------------------------------------------------------

def anchor(path: str) -> str:
    return path.replace(" ", "-")


def prose(text: str) -> str:
    """Help text for Markdown: ``<session>`` must not read as an HTML tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cell(text: str) -> str:
    """Prose for a Markdown table cell: pipes escaped, one line."""
    return prose(text).replace("|", "\\|").replace("\n", " ")


def code_cell(text: str) -> str:
    """A code span in a table cell: only the pipe needs escaping there."""
    return f"`{text.replace('|', chr(92) + '|')}`" if text else "—"


def render(commands: list[Command]) -> str:
    """The whole reference, as Markdown."""
    out = ["# `abcd` command reference", "",
           "<!-- Generated from the typer app (abcd_client.app) by tools/gen_cli_reference.py.",
           f"     Do not edit by hand: run `{REGENERATE}`. -->", "",
           "Every command below is listed with its help text, usage, arguments and options, "
           "exactly as the program defines them. `tests/client/test_cli_reference.py` fails "
           "when this file and the program disagree.", "",
           "| command | summary |", "|---|---|"]
    for c in commands:
        summary = c.help.split("\n\n", 1)[0]
        out.append(f"| [`{c.path}`](#{anchor(c.path)}) | {cell(_first_sentence(summary))} |")
    out.append("")
    out += render_conventions()
    for c in commands:
        out += render_command(c)
    return "\n".join(out).rstrip("\n") + "\n"


def render_conventions() -> list[str]:
    """Exit statuses and environment, from :mod:`abcd_client.exits` (one table each)."""
    from abcd_client.exits import ENVIRONMENT, EXIT_CODES

    out = ["## Exit status", "", "Every verb but `abcd hook` (which always exits 0):", "",
           "| status | meaning |", "|---|---|"]
    out += [f"| `{code}` | {cell(meaning)} |" for code, meaning in EXIT_CODES]
    out += ["", "## Environment", "", "| variable | meaning |", "|---|---|"]
    out += [f"| `{name}` | {cell(meaning)} |" for name, meaning in ENVIRONMENT]
    return out + [""]


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m.group(1) if m else text


def render_command(c: Command) -> list[str]:
    out = [f'<a id="{anchor(c.path)}"></a>', "", f"## `{c.path}`", ""]
    if c.help:
        out += [prose(c.help), ""]
    out += ["```", f"{c.usage}", "```", ""]
    if c.subcommands:
        out += ["Commands: " + ", ".join(f"[`{s}`](#{anchor(c.path + ' ' + s)})" for s in c.subcommands), ""]
    arguments = [p for p in c.params if p.kind == "argument"]
    options = [p for p in c.params if p.kind == "option"]
    if arguments:
        out += ["| argument | type | required | default | help |", "|---|---|---|---|---|"]
        out += [f"| `{p.names[0]}` | {code_cell(p.value)} | {'yes' if p.required else 'no'} | "
                f"{code_cell(p.default)} | {cell(p.help)} |" for p in arguments]
        out.append("")
    if options:
        out += ["| option | value | default | help |", "|---|---|---|---|"]
        out += [f"| {', '.join(f'`{n}`' for n in p.names)} | {code_cell(p.value)} | "
                f"{code_cell(p.default)} | {cell(p.help)} |" for p in options]
        out.append("")
    return out


# -- the surface, for the drift test ----------------------------------------------------

def surface_of_app(commands: list[Command] | None = None) -> set[tuple[str, str]]:
    """(command path, flag or argument) for everything the program accepts; each
    command also appears as (path, "")."""
    commands = walk() if commands is None else commands
    pairs = set()
    for c in commands:
        pairs.add((c.path, COMMAND))
        for p in c.params:
            pairs.update((c.path, n) for n in p.names)
    return pairs


_HEADING = re.compile(r"^## `([^`]+)`\s*$")
_ROW = re.compile(r"^\| ((?:`[^`]+`(?:, )?)+) \|")


def surface_of_markdown(text: str) -> set[tuple[str, str]]:
    """The same pairs, read back from a reference: section headings are commands,
    the first cell of each argument/option row holds the names."""
    pairs = set()
    path = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            path = heading.group(1)
            pairs.add((path, COMMAND))
            continue
        row = _ROW.match(line)
        if row and path is not None:
            pairs.update((path, n) for n in re.findall(r"`([^`]+)`", row.group(1)))
    return pairs


def generate() -> str:
    return render(walk())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is stale")
    parser.add_argument("--out", type=Path, default=DOC, help="where to write (default docs/cli.md)")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
