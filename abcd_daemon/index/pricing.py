"""What a response cost: the pricing table shipped as data (``pricing.toml``).

Contracts:
- prices are USD per million tokens for the four token figures (input, output,
  cache write, cache read), per model, with an optional long-context tier that
  applies to a response whose prompt (input + cache write + cache read) is over the
  tier's threshold;
- a model id matches the longest table key it starts with once a trailing date
  (``-20250929``) is dropped (``claude-sonnet-4-5-20250929`` → ``claude-sonnet-4-5``);
- a model the table does not know is *unpriced*: :meth:`Pricing.cost` returns None
  and reports name it — never a silent zero;
- ``config.toml``'s ``[pricing."<model>"]`` tables override or add models.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import re
import tomllib
from collections.abc import Mapping

_DATE = re.compile(r"-\d{8}$")
#: Prompts over this many tokens are priced at a model's long-context tier (every
#: tier in the shipped table starts here).
LONG_PROMPT = 200_000
FIELDS = ("input", "output", "cache_write", "cache_read")


@dataclasses.dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float
    long_threshold: int = 0
    long: tuple[float, float, float, float] | None = None


def _price(model: str, t: Mapping, where: str) -> Price:
    vals = []
    for f in FIELDS:
        v = t.get(f)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ValueError(f"{where}: pricing for {model!r} needs a non-negative number for {f!r}")
        vals.append(float(v))
    long = t.get("long_context")
    if long is None:
        return Price(*vals)
    if not isinstance(long, Mapping) or not isinstance(long.get("threshold"), int):
        raise ValueError(f"{where}: {model!r} long_context needs an integer threshold")
    return Price(*vals, long_threshold=long["threshold"],
                 long=tuple(_price(model, long, where).__dict__[f] for f in FIELDS))


class Pricing:
    """The shipped table, with ``overrides`` (``{model: {input, output, …}}``) on top."""

    def __init__(self, overrides: Mapping[str, Mapping] | None = None) -> None:
        raw = tomllib.loads(importlib.resources.files(__package__).joinpath("pricing.toml").read_text())
        self.as_of: str = raw.get("as_of", "")
        self._table = {m: _price(m, t, "pricing.toml") for m, t in raw["models"].items()}
        for m, t in (overrides or {}).items():
            self._table[m] = _price(m, t, "config.toml [pricing]")

    def lookup(self, model: str) -> Price | None:
        """The price of ``model`` (see the module contract), or None."""
        base = _DATE.sub("", model)
        best = ""
        for key in self._table:
            if (base == key or base.startswith(key + "-")) and len(key) > len(best):
                best = key
        return self._table.get(best) if best else None

    def cost_of_sums(self, model: str, long: bool, i: int, o: int, cw: int, cr: int) -> float | None:
        """USD for summed figures of responses that are all long-context (``long``)
        or all not, or None when ``model`` is not in the table. A tier whose
        threshold is not :data:`LONG_PROMPT` cannot be priced from sums:
        ValueError (the shipped table has none)."""
        p = self.lookup(model)
        if p is None:
            return None
        if p.long is not None and p.long_threshold != LONG_PROMPT:
            raise ValueError(f"{model}: a long-context threshold other than {LONG_PROMPT} tokens is not supported")
        return _usd(p, long, i, o, cw, cr)

    def cost(self, model: str, i: int, o: int, cw: int, cr: int) -> float | None:
        """USD for one response, or None when ``model`` is not in the table."""
        p = self.lookup(model)
        if p is None:
            return None
        return _usd(p, i + cw + cr > p.long_threshold, i, o, cw, cr)


def _usd(p: Price, long: bool, i: int, o: int, cw: int, cr: int) -> float:
    """The price of the four figures at ``p``'s long-context tier when ``long`` (and it has one)."""
    rates = p.long if (long and p.long is not None) else (p.input, p.output, p.cache_write, p.cache_read)
    return (i * rates[0] + o * rates[1] + cw * rates[2] + cr * rates[3]) / 1e6
