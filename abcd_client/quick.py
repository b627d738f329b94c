"""Run ``abcd search`` and ``abcd usage`` without typer: the read verbs people run in a
loop, whose daemon answers in a few tens of milliseconds — less than importing typer.

:func:`parse` reads a command line only when it is plainly well formed: the verb word
first, then its positional arguments and its long options (``--name value``,
``--name=value``, flags), each as :data:`VERBS` lists them. Anything else — a help
request, an unknown or misspelt option, a missing or out-of-range value, a value or a
positional that starts with ``-``, ``--`` — returns None, and the command line goes to
typer (:mod:`abcd_client.app`), which defines the same verbs and words every help
screen and error. ``tests/client/test_quick.py`` checks that for every option both
read the same values, and that :data:`VERBS` names exactly the options typer declares.

The verb bodies (``commands.search.search``, ``commands.usage.usage``) take keyword
arguments with typer's defaults, and exit through :func:`abcd_client.output.fail`
(``SystemExit``), so they behave the same under either parser.
"""

from __future__ import annotations

#: kinds of option: a flag (no value), text, or an int within [lo, hi]
FLAG, TEXT = "flag", "text"

#: verb → (module under abcd_client.commands, body function, positional parameters
#: (name, required), {option: (parameter, kind)})
VERBS = {
    "search": ("search", "search", (("query", True),), {
        "--all-repos": ("all_repos", FLAG), "--session": ("session", TEXT),
        "--agent-type": ("agent_type", TEXT), "--role": ("role", TEXT), "--tool": ("tool", TEXT),
        "--since": ("since", TEXT), "--until": ("until", TEXT), "--limit": ("limit", (1, 1000)),
        "--json": ("as_json", FLAG)}),
    "usage": ("usage", "usage", (("kind", False),), {
        "--all-repos": ("all_repos", FLAG), "--since": ("since", TEXT), "--until": ("until", TEXT),
        "--breakdown": ("breakdown", FLAG), "--json": ("as_json", FLAG)}),
}


def parse(argv: list[str]):
    """``(verb, {parameter: value})`` for a command line this module runs (only what the
    line gives: the body's defaults fill the rest), or None for typer to handle."""
    if not argv or argv[0] not in VERBS:
        return None
    verb = argv[0]
    _module, _function, positionals, options = VERBS[verb]
    values: dict = {}
    given: list[str] = []
    words = iter(argv[1:])
    for word in words:
        if not word.startswith("-"):
            given.append(word)
            continue
        name, eq, inline = word.partition("=")
        if name not in options:
            return None
        param, kind = options[name]
        if kind == FLAG:
            if eq:
                return None
            values[param] = True
            continue
        value = inline if eq else next(words, None)
        if value is None or value.startswith("-"):
            return None
        if kind != TEXT:
            lo, hi = kind
            if not (value.isascii() and value.isdigit() and lo <= int(value) <= hi):
                return None
            value = int(value)
        values[param] = value
    if len(given) > len(positionals) or any(req for _n, req in positionals[len(given):]):
        return None
    values.update((name, word) for (name, _req), word in zip(positionals, given))
    return verb, values


def run(argv: list[str]) -> bool:
    """Run ``argv`` here when :func:`parse` reads it (True: done; the body may also exit
    with its code), else False. A closed stdout ends quietly with 1 and Ctrl-C with
    "Aborted!" and 1, as click's standalone mode does."""
    parsed = parse(argv)
    if parsed is None:
        return False
    import importlib
    import sys

    verb, values = parsed
    module, function, _positionals, _options = VERBS[verb]
    body = getattr(importlib.import_module(f"{__package__}.commands.{module}"), function)
    try:
        body(**values)
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        raise SystemExit(1) from None
    return True
