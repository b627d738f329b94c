"""Running a redactor CLI over transcript files and reading back what it did.

The command follows the ``abcd redact`` contract: ``CMD FILE --out OUT --json``
exits 0 and prints one JSON object (``scanner``, ``refused: null``, ``findings``:
``[{rule, kind, line, count}]``, ``lines``, ``bytes``) having written the redacted
transcript to OUT; exits 1 on a refusal (``refused: {reason, line, rule}``, and
``abcd: …`` on stderr); exits 2 on bad input — which here means the benchmark is
broken, so it raises.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .example import Example

TIMEOUT_S = 300


@dataclasses.dataclass(frozen=True)
class Item:
    """One placed example: the JSONL ``line`` holding ``example`` in ``context``."""

    example: Example
    context: str
    line: str
    positive: bool


@dataclasses.dataclass
class Result:
    """One run: ``refused`` is the contract's refusal object (or None);
    ``out_lines`` the output's lines (None when refused, or when their count does
    not match the input's); ``findings`` maps a 1-based line to its rule names."""

    refused: dict | None
    out_lines: list[str] | None
    findings: dict[int, list[str]]
    seconds: float
    bytes: int
    scanner: str = ""

    def line(self, i: int) -> str | None:
        """Output line ``i`` (0-based), or None when there is no aligned output."""
        if self.out_lines is None or i >= len(self.out_lines):
            return None
        return self.out_lines[i]


class Runner:
    """Runs ``cmd`` (a list; FILE --out OUT --json appended) with ``env`` in ``cwd``,
    writing inputs and outputs under ``work``."""

    def __init__(self, cmd: list[str], env: dict, cwd: Path, work: Path, jobs: int = 2) -> None:
        self.cmd, self.env, self.cwd, self.work, self.jobs = cmd, env, cwd, work, max(1, jobs)
        self.misaligned = 0

    def run(self, items: list[Item], name: str) -> Result:
        src = self.work / f"{name}.jsonl"
        dst = self.work / f"{name}.out.jsonl"
        data = "".join(it.line + "\n" for it in items).encode()
        src.write_bytes(data)
        dst.unlink(missing_ok=True)
        t = time.perf_counter()
        try:
            proc = subprocess.run([*self.cmd, str(src), "--out", str(dst), "--json"], env=self.env,
                                  cwd=self.cwd, capture_output=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Result({"reason": f"timeout after {TIMEOUT_S}s", "line": None, "rule": "timeout"},
                          None, {}, time.perf_counter() - t, len(data))
        seconds = time.perf_counter() - t
        report = _last_json(proc.stdout)
        scanner = str(report.get("scanner", "")) if report else ""
        stderr = proc.stderr.decode(errors="replace").strip()
        if proc.returncode == 1 and ((report or {}).get("refused") or stderr.startswith("abcd:")):
            refused = (report or {}).get("refused") or {"reason": stderr[-300:], "line": None, "rule": None}
            return Result(refused, None, {}, seconds, len(data), scanner)
        if proc.returncode != 0 or report is None:
            raise RuntimeError(f"{' '.join(self.cmd)} exited {proc.returncode} on {src} (not a refusal "
                               f"by the contract): {stderr[-2000:]}")
        findings: dict[int, list[str]] = {}
        for f in report.get("findings") or []:
            findings.setdefault(int(f.get("line") or 0), []).append(str(f.get("rule") or f.get("kind")))
        text = dst.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) != len(items):
            self.misaligned += 1
            lines = None
        return Result(None, lines, findings, seconds, len(data), scanner)

    def attribute(self, items: list[Item], name: str, first: Result) -> list[tuple[Item, Result, int]]:
        """Attribute the refusal ``first`` of the file holding ``items``. While the
        refusal names a line, that example is set aside and the rest re-run; each
        set-aside example is then run alone. A refusal naming no line is split by
        halves until every example is in a run that was not refused, or alone in
        one that was. Returns, per item, the deciding run and its line index there."""
        out: list[tuple[Item, Result, int]] = []
        rest, res, aside, round_ = list(items), first, [], 0
        while True:
            line = (res.refused or {}).get("line")
            if res.refused is None:
                out += [(it, res, i) for i, it in enumerate(rest)]
                break
            if not isinstance(line, int) or not 1 <= line <= len(rest) or len(rest) == 1:
                out += self._bisect(rest, f"{name}-r{round_}")
                break
            aside.append(rest.pop(line - 1))
            if not rest:
                break
            round_ += 1
            res = self.run(rest, f"{name}-r{round_}")
        with ThreadPoolExecutor(self.jobs) as pool:
            alone = list(pool.map(lambda p: self.run([p[1]], f"{name}-alone{p[0]}"), enumerate(aside)))
        return out + [(it, r, 0) for it, r in zip(aside, alone)]

    def _bisect(self, items: list[Item], name: str) -> list[tuple[Item, Result, int]]:
        out: list[tuple[Item, Result, int]] = []
        pending = _halves(items, name)
        with ThreadPoolExecutor(self.jobs) as pool:
            while pending:
                results = list(pool.map(lambda g: self.run(*g), pending))
                nxt = []
                for (group, gname), res in zip(pending, results):
                    if res.refused is None or len(group) == 1:
                        out += [(it, res, i) for i, it in enumerate(group)]
                    else:
                        nxt += _halves(group, gname)
                pending = nxt
        return out


def _halves(items: list[Item], name: str) -> list[tuple[list[Item], str]]:
    if len(items) == 1:
        return [(items, f"{name}-x")]
    mid = len(items) // 2
    return [(items[:mid], f"{name}-a"), (items[mid:], f"{name}-b")]


def _last_json(stdout: bytes) -> dict | None:
    """The report: all of stdout as one (possibly indented) JSON object, else its
    last line that is one."""
    text = stdout.decode(errors="replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        return obj
    for raw in reversed(text.splitlines()):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None
