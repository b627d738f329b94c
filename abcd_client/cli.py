"""The ``abcd`` entry point (``abcd_client.cli:main``, and ``python -m abcd_client``).

Start-up is latency (DESIGN §3.9; ``bench/cli.py``, ``bench/search.py``): importing typer
(and the click it carries) costs more than a daemon takes to answer a search. So a
command line :mod:`abcd_client.quick` can read — a daemon-served read verb (``search``,
``usage``, ``history list | show | staged``, one session's ``history reconstruct``,
``daemon status``) with well-formed options — runs its verb's body directly, while a
daemon answers; every other command line (help, a mistake, any other verb, no daemon)
goes through the typer tree in :mod:`abcd_client.app`, which also defines those verbs,
their help and their error messages.
"""

from __future__ import annotations


def main() -> None:
    import sys

    from .quick import run

    if run(sys.argv[1:]):
        return
    from .app import main as typer_main

    typer_main()
