"""Assemble a :class:`~.engine.Scanner`: bundled rules + identity + repository additions.

Rules for additions (``[[scanner.rules]]`` in config.toml, reference §3.1):
- An addition naming a bundled rule may only RAISE its severity; lowering it,
  or giving it another regex, kind or keywords, degrades the scanner.
- A new rule needs ``name``, ``severity`` (hard_fail|warn|info), ``keywords`` (a
  non-empty list of strings) and ``regex`` (compiles as a bytes pattern); ``kind``
  defaults to ``custom:<name>``; ``examples`` ``{positive: [...], negative: [...]}``
  are checked against the built scanner. A named group ``secret`` narrows the mask.
- Anything else (unknown keys, wrong types, a duplicate name) degrades the scanner.
- An added rule is tried in a window of ``ADDITION_BACK`` bytes before and
  ``ADDITION_REACH`` after each keyword hit, clipped to the hit's line.
A degraded scanner refuses every capture (``redact_text`` raises DegradedScanner);
:func:`build_scanner` itself never raises.

Identity enters twice: the ``identity.*`` templates become literal rules, and the
``home_path_other`` regexes refuse the caller's own user name (that name under a
home root is the caller's home, or their user name: other rules' findings).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from ..paths import cache_dir
from .checks import CHECKS, Context
from .engine import Scanner
from .generic import GENERIC_RULES
from .identity import Identity, home_is_single_segment, identity_rules
from .linear import compile_linear
from .provider import RulesetUnavailable, load_ruleset
from .bundled import BUNDLED_BY_NAME, BUNDLED_RULES
from .rules import SEVERITY_RANK, Rule

#: Our own detectors' version: bump it when a bundled or generic rule changes, so
#: ``abcd history rescan`` knows which records an older table redacted.
OWN_RULES_VERSION = 11

_ADDITION_KEYS = frozenset({"name", "kind", "severity", "keywords", "regex", "examples", "description"})
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
#: Window of an added rule around its keyword hits (bytes back / ahead).
ADDITION_BACK = 256
ADDITION_REACH = 1024


class _Unusable(Exception):
    pass


def current_label() -> str:
    """The label a whole scanner built now would carry ("" if the ruleset is unusable)."""
    try:
        return f"{load_ruleset().label} + abcd {OWN_RULES_VERSION}"
    except RulesetUnavailable:
        return ""


def build_scanner(identity: Identity, additions: Sequence[Mapping] = (), *, gated: bool = True) -> Scanner:
    """The scanner for ``identity`` with ``additions`` merged in. Never raises;
    ``scanner.degraded`` names the first reason it is not whole. ``gated=False`` skips
    the Vectorscan gate (seconds of CPU to compile on a cold cache): the same findings
    and the same ``degraded`` verdict — the gate never hides a finding and never
    degrades a scanner — only slower scans; for a check of the configuration."""
    home = identity.home.encode("utf-8", "surrogateescape").rstrip(b"/")
    root, _, tail = home.lower().rpartition(b"/")
    ctx = Context(
        home=home,
        home_single_segment=home_is_single_segment(identity.home),
        remote_repo=identity.remote_repo.encode("utf-8", "surrogateescape"),
        home_tail=tail,
        home_root=root,
    )
    try:
        base = _bundled(identity)
        for rule in base:  # every bundled rule must compile and name a known check
            if rule.source != "generic":
                re.compile(rule.regex.encode("utf-8"))
            if rule.check and rule.check not in CHECKS:
                raise ValueError(f"rule {rule.name!r} names no known check {rule.check!r}")
    except Exception as exc:  # a bundled rule that does not build is a degraded scanner
        return Scanner((), ctx, degraded=f"bundled rule table unusable: {exc}")
    try:
        ruleset = load_ruleset()
    except RulesetUnavailable as exc:  # no provider rules: not a scanner we store with
        return _degraded(base, ctx, f"provider ruleset unusable: {exc}")
    label = current_label()
    for rule in ruleset.rules:  # compiled once per process (cached), shared by every scanner
        try:
            compile_linear(rule.regex)
        except ValueError as exc:
            return _degraded(base, ctx, f"provider ruleset unusable: rule {rule.name} does not compile: {exc}")
    # Provider rules before ours: on an equal span the provider's name is the more
    # telling one (``betterleaks.gitlab-pat`` over ``secret_assignment``).
    own = [r for r in base if r.source != "generic"]
    base = own + list(ruleset.rules) + [r for r in base if r.source == "generic"]
    try:
        rules, checks = _merge(base, additions)
        scanner = Scanner(rules, ctx, label=label, gate_cache=cache_dir(), gated=gated)
    except _Unusable as exc:
        return _degraded(base, ctx, str(exc))
    except Exception as exc:
        return _degraded(base, ctx, f"scanner addition unusable: {exc}")
    for rule, examples in checks:
        problem = _example_problem(scanner, rule, examples)
        if problem:
            return _degraded(base, ctx, problem)
    return scanner


def _degraded(base: list[Rule], ctx: Context, reason: str) -> Scanner:
    try:  # never redacts with, so never gated (no database to build for it)
        return Scanner(base, ctx, degraded=reason, gated=False)
    except Exception:
        return Scanner((), ctx, degraded=reason)


def _bundled(identity: Identity) -> list[Rule]:
    out = []
    for rule in BUNDLED_RULES + GENERIC_RULES:
        if rule.source.startswith("identity."):
            built = identity_rules(rule, identity)
            if built is not None:
                out.append(built)
        elif rule.kind == "home_path_other" and identity.user:
            # The caller's own name under a home root is the caller's home (or, under
            # another root, their user name): left to home_path_self/local_username,
            # so it is refused here in the regex rather than by a predicate per hit.
            user = re.escape(identity.user)
            out.append(dataclasses.replace(rule, regex=rule.regex.replace(
                _OTHER_USER, f"(?!(?i:{user})(?![A-Za-z0-9])){_OTHER_USER}")))
        else:
            out.append(rule)
    return out


_OTHER_USER = "([A-Za-z0-9._-]+)"


def _merge(base: list[Rule], additions: Sequence[Mapping]) -> tuple[list[Rule], list]:
    rules = list(base)
    index = {r.name: i for i, r in enumerate(rules)}
    seen: set[str] = set()
    checks = []
    for n, add in enumerate(additions):
        where = f"scanner addition #{n + 1}"
        if not isinstance(add, Mapping):
            raise _Unusable(f"{where} is not a table")
        unknown = set(add) - _ADDITION_KEYS
        if unknown:
            raise _Unusable(f"{where} has unknown key(s) {sorted(unknown)}")
        name = add.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _Unusable(f"{where}: name must be 1-64 characters of [A-Za-z0-9_.:-]")
        where = f"scanner addition {name!r}"
        if name in seen:
            raise _Unusable(f"{where} is given twice")
        seen.add(name)
        severity = add.get("severity")
        if severity not in SEVERITY_RANK:
            raise _Unusable(f"{where}: severity must be one of hard_fail, warn, info")
        if name in BUNDLED_BY_NAME:
            bundled = BUNDLED_BY_NAME[name]
            for key in ("regex", "kind", "keywords"):
                if key in add and _norm(add[key]) != _norm(getattr(bundled, key)):
                    raise _Unusable(f"{where} tries to replace the bundled rule's {key}; add a rule of a new name")
            if SEVERITY_RANK[severity] < SEVERITY_RANK[bundled.severity]:
                raise _Unusable(f"{where} tries to lower the bundled severity {bundled.severity} to {severity}")
            if name in index:
                rules[index[name]] = dataclasses.replace(rules[index[name]], severity=severity)
            continue
        rule = _new_rule(add, name, severity, where)
        rules.append(rule)
        checks.append((rule, add.get("examples")))
    return rules, checks


def _norm(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _new_rule(add: Mapping, name: str, severity: str, where: str) -> Rule:
    keywords = add.get("keywords")
    if not isinstance(keywords, (list, tuple)) or not keywords or not all(isinstance(k, str) and k for k in keywords):
        raise _Unusable(f"{where}: keywords must be a non-empty list of non-empty strings")
    regex = add.get("regex")
    if not isinstance(regex, str) or not regex:
        raise _Unusable(f"{where}: regex must be a non-empty string")
    try:
        compiled = compile_linear(regex)
    except ValueError as exc:  # RE2 only: an addition must not be able to backtrack
        raise _Unusable(f"{where}: regex does not compile ({exc}); additions use RE2 syntax "
                        "(no lookaround, no backreferences)") from None
    kind = add.get("kind", f"custom:{name}")
    if not isinstance(kind, str) or not _NAME.fullmatch(kind):
        raise _Unusable(f"{where}: kind must be 1-64 characters of [A-Za-z0-9_.:-]")
    examples = add.get("examples")
    if examples is not None:
        ok = isinstance(examples, Mapping) and set(examples) <= {"positive", "negative"} and all(
            isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v) for v in examples.values()
        )
        if not ok:
            raise _Unusable(f"{where}: examples must be {{positive = [...], negative = [...]}} of strings")
    return Rule(
        name=name, kind=kind, severity=severity, keywords=tuple(k.lower() for k in keywords), regex=regex,
        group=_secret_group(compiled), back=ADDITION_BACK, reach=ADDITION_REACH, boundary="",
        source="addition",
        positive=tuple((examples or {}).get("positive", ())), negative=tuple((examples or {}).get("negative", ())),
    )


def _secret_group(compiled) -> int:
    index = compiled.groupindex or {}
    return index.get(b"secret", index.get("secret", 0))


def _example_problem(scanner: Scanner, rule: Rule, examples) -> str:
    if not examples:
        return ""
    for text in rule.positive:
        if not any(f.rule == rule.name for f in scanner.scan(text.encode("utf-8"))):
            return f"scanner addition {rule.name!r}: positive example {len(text)} chars long is not found"
    for text in rule.negative:
        if any(f.rule == rule.name for f in scanner.scan(text.encode("utf-8"))):
            return f"scanner addition {rule.name!r}: a negative example is matched"
    return ""
