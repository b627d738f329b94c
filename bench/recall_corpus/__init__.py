"""A labelled corpus for measuring a secret redactor, independent of any ruleset.

Positives are generated (seeded, deterministic) from each provider's documented
token format (``formats``) plus generic families (``generic``, ``structured``:
secret-named assignments, connection strings, auth headers, URL userinfo, JWTs,
PEM private keys, prose); negatives are near misses a careful human redactor would
leave alone (``negatives``). ``contexts`` places any example in a Claude Code
transcript line.

Stable API (other tools import it)::

    corpus = build(seed=0, per_family=4)   # -> Corpus(.positives, .negatives)
    line = place(example, context)         # -> one JSONL line, context in CONTEXTS
"""

from __future__ import annotations

import random

from . import formats, generic, negatives
from .contexts import CONTEXTS, PEM_CONTEXTS, contexts_for, place
from .example import Corpus, Example

__all__ = ["CONTEXTS", "PEM_CONTEXTS", "Corpus", "Example", "build", "contexts_for", "place"]


def build(seed: int = 0, per_family: int = 4) -> Corpus:
    """The corpus for ``seed``: ``per_family`` examples of every positive family and
    ``4 * per_family`` of every negative family (there are far fewer negative
    families), each list shuffled with the same seeded generator. A pure function
    of its arguments."""
    if per_family < 1:
        raise ValueError("per_family must be at least 1")
    rng = random.Random(seed)
    pos = formats.examples(rng, per_family) + generic.examples(rng, per_family)
    neg = negatives.examples(rng, 4 * per_family)
    rng.shuffle(pos)
    rng.shuffle(neg)
    return Corpus(positives=pos, negatives=neg)
