"""A labelled set from outside the repository, measured like the generated corpus.

``bench/recall.py --examples FILE`` measures ``abcd redact`` on examples abcd's rules
were not written from — a scanner's published test cases, a red team's list — kept
out of the repository (their licences are their own; the figures, not the data, go
in the README). ``FILE`` is JSON Lines, one example per line::

    {"family": "gitlab", "positive": true,  "text": "token = glpat-…", "secret": "glpat-…"}
    {"family": "gitlab", "positive": false, "text": "token = glpat-short", "secret": "glpat-short"}

``secret`` is an exact substring of ``text``: for a positive the credential a
redactor must remove, for a negative the near miss it must leave alone (the whole
text when empty). Optional ``prefix`` / ``suffix``: documented, non-secret ends of
``secret`` the survival check ignores. A line that is not such an object is
reported with its number and the reason, and the load stops (a labelled set with a
broken line is not measured as if it were whole).
"""

from __future__ import annotations

import json
from pathlib import Path

from .example import Corpus, Example


def load(path: Path) -> Corpus:
    """The examples of ``path`` (see the module contract). Raises ValueError naming
    the line and what is wrong with it."""
    pos: list[Example] = []
    neg: list[Example] = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                text = d["text"]
                secret = d.get("secret") or text
                ex = Example(family=str(d["family"]), provider=bool(d.get("provider", True)), secret=secret,
                             text=text, prefix=d.get("prefix", ""), suffix=d.get("suffix", ""))
                positive = d["positive"]
                if not isinstance(positive, bool) or not isinstance(text, str) or "\n" in secret:
                    raise ValueError("`positive` must be true or false, `text` a string, `secret` one line")
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise ValueError(f"{path}:{n}: not a labelled example ({err}); see bench/recall_corpus/external.py")
            (pos if positive else neg).append(ex)
    if not pos:
        raise ValueError(f"{path}: no positive example")
    return Corpus(positives=pos, negatives=neg)
