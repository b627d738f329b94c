"""Provider examples: every :class:`~.tokens.Spec` of ``formats_*`` rendered into
labelled :class:`~.example.Example` strings.

Half the examples of a format with a documented prefix (``bare``) carry no
secret-ish word at all (the token alone, in a list, in a constructor call, or in a
provider-specific command line), so they measure provider coverage rather than
the generic name detectors; the other half, and every example of a format without
a prefix, sit after the provider's own variable name in one of the syntaxes a
transcript carries (``NAME=``, ``export``, JSON, YAML, TOML/Python, a CLI flag).
"""

from __future__ import annotations

import json
import random

from . import formats_cloud, formats_dev, formats_saas
from .example import Example
from .tokens import Made, Spec

SPECS: list[Spec] = formats_cloud.PROVIDERS + formats_dev.PROVIDERS + formats_saas.PROVIDERS

_NAMED = (
    "{E}={v}",
    'export {E}="{v}"',
    '{{"{e}": {jv}, "region": "us-east-1", "retries": 3}}',
    "{e}: {v}",
    '{e} = "{v}"',
    "./scripts/deploy.sh --{d} {v} --env production",
    "{E}='{v}' node server.js",
    '  "{c}": {jv},',
)
_BARE = (
    "{v}",
    "- {v}",
    "{v}  (created 2025-11-02, never expires)",
    'client = Client("{v}")',
    "default  {v}",
)


def _names(env: str) -> dict[str, str]:
    low = env.lower()
    parts = low.split("_")
    camel = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return {"E": env, "e": low, "d": low.replace("_", "-"), "c": camel}


def render(spec: Spec, made: Made, rng: random.Random, bare: bool) -> Example:
    """One example of ``made`` (a value of ``spec``); ``bare`` picks a template with
    no secret-ish name (only meaningful for a ``spec.bare`` format)."""
    v = made.value
    fields = dict(_names(spec.env), v=v, jv=json.dumps(v))
    if bare and spec.uses and rng.random() < 0.5:
        text = rng.choice(spec.uses).format(v=v)
    elif bare:
        text = rng.choice(_BARE).format(**fields)
    else:
        text = rng.choice(_NAMED).format(**fields)
    quoted = f'"{v}"' if any(c in v for c in " ;&$") else v
    return Example(family=spec.family, provider=True, secret=made.secret, text=text,
                   prefix=made.prefix, suffix=made.suffix, env_line=f"{spec.env}={quoted}")


def examples(rng: random.Random, per_family: int) -> list[Example]:
    """``per_family`` examples of every provider format, alternating bare / named
    (from a seeded start) for formats with a documented prefix."""
    out: list[Example] = []
    for spec in SPECS:
        start = rng.randrange(2)
        for i in range(per_family):
            made = spec.make(rng)
            out.append(render(spec, made, rng, bare=spec.bare and (start + i) % 2 == 0))
    return out
