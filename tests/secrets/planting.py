"""Planting the rule table's own secrets into real transcripts, and looking for them.

Pure helpers for ``test_secrets_never_stored`` (no processes here):

- :func:`planted_secrets` takes one positive example per rule of the bundled table
  (iterated, so a new rule is covered without touching the test) and finds, with a
  scanner built for the example identity, the span the rule itself calls the secret.
- :func:`needle` is the part of that span which must never be stored: its middle
  third, widened inside the span to at least ``MIN_NEEDLE`` bytes. Masking keeps at
  most a 3-rune head and a 2-rune tail of a long token, so the needle always lies in
  what masking removes.
- :data:`ENCODINGS` plant an example into a copy of a real transcript: a plain JSON
  string, a JSON document escaped twice inside a string, a percent-encoded URL, a
  tool_result block, the ``cwd`` of every line; ``agent_type`` goes in the payload.
- :func:`spellings` / :func:`leaks` look for a needle in stored bytes in every
  spelling the encodings can give it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import urllib.parse
from pathlib import Path

from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.scanner.bundled import BUNDLED_RULES, EXAMPLE_IDENTITY
from abcd_daemon.scanner.rules import Rule

MIN_NEEDLE = 8

#: Rule kinds planted but not grepped for, and why. A new rule whose examples make no
#: usable needle fails ``test_every_rule_kind_is_planted_or_explained`` until listed.
UNGREPPABLE = {
    "harness:attribution_footer": (
        "not a secret: a harness attribution marker ('Generated with [') masked only where "
        "it owns its line; its middle third is ordinary English that legitimately stays "
        "wherever the marker does not own a line (a URL parameter, a cwd)"),
}

#: The transcript fields an example is planted into (agent_type goes in the payload).
ENCODINGS = ("plain", "double_escaped", "url_encoded", "tool_result", "cwd", "agent_type")


@dataclasses.dataclass(frozen=True)
class Planted:
    """One rule's planted secret: the example text, the secret span, the needle."""

    rule: str
    kind: str
    example: str
    secret: bytes

    @property
    def needle(self) -> bytes:
        return needle(self.secret)


def example_scanner():
    """The scanner for the identity the table's identity examples are written for."""
    scanner = build_scanner(Identity(**EXAMPLE_IDENTITY))
    assert scanner.degraded == "", scanner.degraded
    return scanner


def own_rules_scanner():
    """The example scanner with our own rules only (see ``tests.scanner.helpers``)."""
    from ..scanner.helpers import own_rules

    return own_rules(example_scanner())


def secret_span(scanner, rule: Rule, example: str) -> bytes | None:
    """The longest span of ``example`` that ``rule`` itself reports, or None."""
    data = example.encode("utf-8")
    spans = [data[f.start:f.end] for f in scanner.scan(data) if f.rule == rule.name]
    return max(spans, key=len) if spans else None


def pick_example(scanner, rule: Rule) -> tuple[str, bytes] | None:
    """The first positive example whose secret is at least ``MIN_NEEDLE`` bytes, else
    the one with the longest secret."""
    best = None
    for example in rule.positive:
        span = secret_span(scanner, rule, example)
        if span is None:
            continue
        if len(span) >= MIN_NEEDLE:
            return example, span
        if best is None or len(span) > len(best[1]):
            best = (example, span)
    return best


def planted_secrets() -> list[Planted]:
    """One planted secret per bundled rule (rules with no usable example are absent)."""
    scanner = own_rules_scanner()
    out = []
    for rule in BUNDLED_RULES:
        picked = pick_example(scanner, rule)
        if picked is not None:
            out.append(Planted(rule=rule.name, kind=rule.kind, example=picked[0], secret=picked[1]))
    return out


def needle(secret: bytes) -> bytes:
    """The middle third of ``secret``, widened (centred) to ``MIN_NEEDLE`` bytes when
    shorter; a secret shorter than that is its own needle."""
    n = len(secret)
    lo, hi = n // 3, n - n // 3
    if hi - lo < MIN_NEEDLE:
        width = min(MIN_NEEDLE, n)
        lo = (n - width) // 2
        hi = lo + width
    return secret[lo:hi]


def spellings(text: bytes) -> set[bytes]:
    """``text`` as it can appear in a store: plain, JSON-escaped one to three times,
    with JSON-escaped slashes, and percent-encoded."""
    s = text.decode("utf-8")
    out = {text, s.replace("/", "\\/").encode("utf-8"),
           urllib.parse.quote(s, safe="").encode("ascii")}
    escaped = s
    for _ in range(3):
        escaped = json.dumps(escaped, ensure_ascii=False)[1:-1]
        out.add(escaped.encode("utf-8"))
    return out


def leak_pattern(planted: Planted) -> re.Pattern[bytes]:
    """A bytes regex that finds the needle in any spelling. A needle shorter than
    ``MIN_NEEDLE`` (a short account name such as ``ada``) is only a leak standing as a
    word (a percent or JSON escape before it counts as a word boundary): as bare bytes
    it is inside ordinary words ('metadata', 'Canada') that are rightly kept."""
    alternatives = b"|".join(re.escape(s) for s in sorted(spellings(planted.needle)))
    if len(planted.needle) < MIN_NEEDLE:
        before = rb"(?:(?<![A-Za-z0-9])|(?<=%[0-9A-Fa-f]{2})|(?<=\\[nrt]))"  # %40ada, \\nada
        return re.compile(before + rb"(?:" + alternatives + rb")(?![A-Za-z0-9])")
    return re.compile(alternatives)


# -- planting into a real transcript ---------------------------------------------------

def load_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def dump_lines(lines: list[dict]) -> bytes:
    return ("\n".join(json.dumps(o, ensure_ascii=False) for o in lines) + "\n").encode("utf-8")


def _blocks(lines: list[dict], block_type: str):
    for line in lines:
        content = (line.get("message") or {}).get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == block_type:
                    yield block


def _first(lines: list[dict], block_type: str) -> dict:
    for block in _blocks(lines, block_type):
        return block
    raise AssertionError(f"the fixture transcript has no {block_type} block to plant into")


def plant(lines: list[dict], encoding: str, example: str) -> list[dict]:
    """A deep copy of ``lines`` with ``example`` planted as ``encoding`` says
    (``agent_type`` plants nothing here: it rides in the payload)."""
    out = json.loads(json.dumps(lines))
    if encoding == "plain":
        _first(out, "text")["text"] += "\n" + example + "\n"
    elif encoding == "double_escaped":
        inner = json.dumps({"tool_input": json.dumps({"note": example})})
        _first(out, "text")["text"] += " " + inner
    elif encoding == "url_encoded":
        _first(out, "text")["text"] += (" https://example.invalid/callback?next="
                                        + urllib.parse.quote(example, safe="") + "&step=2")
    elif encoding == "tool_result":
        _first(out, "tool_result")["content"] = "output:\n" + example + "\n"
    elif encoding == "cwd":
        for line in out:
            if "cwd" in line:
                line["cwd"] = line["cwd"] + "/" + example
    elif encoding != "agent_type":
        raise ValueError(encoding)
    return out


def as_thread(lines: list[dict], session_id: str, agent_id: str = "") -> list[dict]:
    """Relabel a fixture's lines as ``session_id``'s main thread or one of its agents."""
    for line in lines:
        if "sessionId" in line:
            line["sessionId"] = session_id
        if agent_id:
            line["agentId"] = agent_id
            line["isSidechain"] = True
    return lines
