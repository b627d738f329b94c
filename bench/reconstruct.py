"""Benchmark: reconstruct a 55-record session (1 main thread + 54 sub-agents, ~8 MB).

Builds a reproducible session (seeded) from lines shaped like the real Claude Code
fixtures — one line per content block repeating ``message.id`` and usage, tool results
with a structured ``toolUseResult`` copy, background agents joined by task
notifications — stores it as records in a temporary ABCD_HOME, then measures in the
same run:

  (a) ``reconstruct`` in full mode, (b) in spine mode, both from the store, and
  (c) the floor: listing and reading every record and decoding every JSON line with
      msgspec, nothing else.

Each figure is the best of ``--repeat`` runs. The last line printed is one JSON object:
``{"full_s", "spine_s", "floor_s", "full_vs_floor", "artefact_mb", "spine_mb",
"agents_placed", "agents_total"}``. Targets: full_vs_floor ≤ 3, every agent placed,
spine ≤ 30 % of full.

``--real`` measures faithfulness instead, over every session in
``tests/fixtures/claude-code-log/real_projects`` — empty main files and sessions named
only by their sub-agents included — stored as capture stores them (see
``tests/reconstruct/real.py``). What the files say is counted independently of the
reconstruct package (``independent_spawns``) and compared with what reconstruction
reports: agents placed / agents whose spawning call is in a stored thread, agents
typed / sub-agents (compaction agents apart; every placed agent must be typed),
compaction agents linked / stored, spawns without a transcript reported / found, and
unrecognised lines. Last line: ``{"placed", "placeable", "typed", "agents",
"compaction_linked", "compaction", "missing_reported", "unrecognised_lines"}``.
Targets: placed == placeable, every placed agent typed, compaction_linked ==
compaction, missing_reported == missing found, unrecognised_lines == 0.

    .venv/bin/python bench/reconstruct.py [--seed N] [--repeat N] [--mb 8]
    .venv/bin/python bench/reconstruct.py --real [--check]

``--corpus`` measures something else: the whole real fixture corpus through the CLI,
against claude-code-log 1.7.0 on the same tree (``bench/reconstruct_corpus.py``).

    .venv/bin/python bench/reconstruct.py --corpus [--repeat 3] [--ccl PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgspec  # noqa: E402

from abcd_daemon.paths import Home  # noqa: E402
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct  # noqa: E402
from abcd_daemon.store.lane import Lane  # noqa: E402
from abcd_daemon.store.record import (Record, format_record, format_rfc3339_ns,  # noqa: E402
                                      record_filename)
from abcd_daemon.store.records import list_for_session, read_body  # noqa: E402

SESSION = "b3e0c0de-5555-4000-8000-000000000055"
ROOT = "5" * 40
AGENTS = 54
T0 = 1_780_000_000
_WORDS = ("the agent reads every file before it edits one and runs the tests again after "
          "each change so that a failing case is seen at once `code` spans and paths like "
          "src/app/main.py or tests/test_app.py appear in prose as do numbers 42 1.5 and "
          "words such as refactor coverage fixture parser telemetry artefact").split()
_CODE = ['def f(x):', '    return x + 1', 'for item in items:', '    total += item.size',
         '```python', '```', 'import os', 'class Parser:', '    """Parse one line."""',
         'assert result == expected', '# TODO: handle the empty case', 'x = `y` + 1']


class Writer:
    """One transcript, Claude Code shaped."""

    def __init__(self, rng: random.Random, agent_id: str, start: float) -> None:
        self.rng = rng
        self.agent_id = agent_id
        self.clock = start
        self.lines: list[bytes] = []
        self.parent = None
        self.n = 0

    def _base(self, kind: str) -> dict:
        self.n += 1
        self.clock += self.rng.uniform(0.5, 6.0)
        uuid = f"{self.agent_id or 'main'}-{self.n:05d}-{self.rng.getrandbits(48):012x}"
        line = {"parentUuid": self.parent, "isSidechain": bool(self.agent_id),
                "userType": "external", "cwd": "/home/dev/project", "sessionId": SESSION,
                "version": "2.1.90", "gitBranch": "main", "type": kind, "uuid": uuid,
                "timestamp": format_rfc3339_ns(int(self.clock * 1e9))[:-1][:23] + "Z"}
        if self.agent_id:
            line["agentId"] = self.agent_id
        self.parent = uuid
        return line

    def emit(self, line: dict) -> None:
        self.lines.append(msgspec.json.encode(line))

    def prose(self, words: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(words))

    def code(self, lines: int) -> str:
        return "\n".join(self.rng.choice(_CODE) for _ in range(lines))

    def user_text(self, text: str) -> None:
        line = self._base("user")
        line["message"] = {"role": "user", "content": text}
        self.emit(line)

    def response(self, blocks: list[dict]) -> None:
        """One API response: a line per block, each repeating id and usage."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        usage = {"input_tokens": self.rng.randint(1, 30),
                 "cache_creation_input_tokens": self.rng.randint(0, 4000),
                 "cache_read_input_tokens": self.rng.randint(5000, 90000),
                 "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                    "ephemeral_1h_input_tokens": 0},
                 "output_tokens": self.rng.randint(20, 900), "service_tier": "standard"}
        for i, block in enumerate(blocks):
            line = self._base("assistant")
            line["message"] = {"model": "claude-opus-4-7", "id": msg_id, "type": "message",
                               "role": "assistant", "content": [block],
                               "stop_reason": "tool_use" if i == len(blocks) - 1 else None,
                               "stop_sequence": None, "usage": usage}
            line["requestId"] = f"req_{msg_id[4:]}"
            self.emit(line)

    def result(self, tool_id: str, text: str, extra: dict | None = None) -> None:
        line = self._base("user")
        line["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": text}]}
        line["toolUseResult"] = extra or {"stdout": text, "stderr": "", "interrupted": False,
                                          "isImage": False}
        self.emit(line)

    def work_turn(self, big: bool) -> None:
        """thinking + text + a tool call, then its result."""
        tool_id = f"toolu_{self.rng.getrandbits(96):024x}"
        name = self.rng.choice(["Read", "Bash", "Grep", "Edit", "Write"])
        self.response([
            {"type": "thinking", "thinking": self.prose(self.rng.randint(20, 120)),
             "signature": "Eq" + "A" * 120},
            {"type": "text", "text": self.prose(self.rng.randint(10, 60))},
            {"type": "tool_use", "id": tool_id, "name": name,
             "input": {"file_path": "src/app/main.py", "command": self.prose(6),
                       "content": self.code(self.rng.randint(3, 40))}},
        ])
        size = self.rng.randint(300, 40000 if big else 6000)
        self.result(tool_id, self.code(max(1, size // 18)))

    def body(self) -> bytes:
        return b"\n".join(self.lines) + b"\n"


def build(seed: int, target_mb: float) -> list[tuple[dict, bytes]]:
    """(lineage, body) for the main thread and 54 sub-agents, deterministic in ``seed``."""
    rng = random.Random(seed)
    per_agent = target_mb * 0.78 * 1e6 / AGENTS  # the main thread and overshoot: the rest
    main = Writer(rng, "", T0)
    main.user_text("Split the work across agents: " + main.prose(40))
    agents: list[tuple[dict, bytes]] = []
    pending: list[str] = []  # background agents awaiting their notification
    for k in range(AGENTS):
        agent_id = f"a{rng.getrandbits(64):016x}"[:17]
        tool_id = f"toolu_{rng.getrandbits(96):024x}"
        background = k % 3 == 0
        main.response([{"type": "text", "text": main.prose(30)},
                       {"type": "tool_use", "id": tool_id, "name": "Agent",
                        "input": {"description": f"part {k}", "subagent_type": "general-purpose",
                                  "prompt": main.prose(80), "run_in_background": background}}])
        sub = Writer(rng, agent_id, main.clock)
        sub.user_text(main.prose(80))
        while len(b"\n".join(sub.lines)) < per_agent:
            sub.work_turn(big=rng.random() < 0.3)
        sub.response([{"type": "text", "text": "Report: " + sub.prose(120)}])
        if background:
            main.result(tool_id, f"Async agent launched successfully.\nagentId: {agent_id} "
                        "(internal ID)\nThe agent is working in the background.",
                        {"isAsync": True, "status": "async_launched", "agentId": agent_id})
            pending.append(agent_id)
        else:
            main.result(tool_id, f"Report: done.\nagentId: {agent_id} (use SendMessage)",
                        {"status": "completed", "agentId": agent_id})
        main.work_turn(big=False)
        if pending and rng.random() < 0.5:
            done = pending.pop(0)
            main.user_text(f"<task-notification>\n<task-id>{done}</task-id>\n"
                           "<status>completed</status>\n</task-notification>")
        # Half the records carry their spawn call (rung 1); the rest rely on rung 2.
        lineage = {"agent_id": agent_id, "agent_type": "general-purpose",
                   "spawn_tool_use_id": tool_id if k % 2 else "", "spawn_depth": 1 if k % 2 else 0,
                   "spawn_attribution": "sidecar" if k % 2 else "unattributed"}
        agents.append((lineage, sub.body()))
    for done in pending:
        main.user_text(f"<task-notification>\n<task-id>{done}</task-id>\n"
                       "<status>completed</status>\n</task-notification>")
    main.response([{"type": "text", "text": "All parts are done. " + main.prose(60)}])
    return [({}, main.body())] + agents


def store(home: Home, session: list[tuple[dict, bytes]]) -> Lane:
    lane = Lane(home, ROOT).ensure("records")
    for i, (lineage, body) in enumerate(session):
        record = Record(session_id=SESSION, root_commit=ROOT,
                        source_sha256=hashlib.sha256(body).hexdigest(),
                        captured_at=format_rfc3339_ns((T0 + 90_000 + i) * 1_000_000_000),
                        lineage_source="hook" if lineage else "", **lineage)
        (lane.records / record_filename(record)).write_bytes(format_record(record, body))
    return lane


def floor(lane: Lane) -> int:
    """Read every record and decode every JSON line: the cost nothing can avoid."""
    decode = msgspec.json.decode
    lines = 0
    for record in list_for_session(lane, SESSION):
        for raw in read_body(lane, record).split(b"\n"):
            if raw:
                decode(raw)
                lines += 1
    return lines


def best(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def real(check: bool) -> None:
    """The ``--real`` mode (see the module docstring)."""
    from tests.reconstruct.real import independent_spawns, sessions, store_session
    totals = dict.fromkeys(("placed", "placeable", "typed", "agents", "compaction_linked",
                            "compaction", "missing_reported", "unrecognised_lines"), 0)
    missing_found = placed_untyped = placed_not_placeable = empty = 0
    with tempfile.TemporaryDirectory(prefix="abcd-bench-") as tmp:
        lane = Lane(Home(Path(tmp) / "home"), ROOT)
        for main in sessions():
            said = independent_spawns(main)
            session = store_session(lane, main)
            if not list_for_session(lane, session):
                empty += 1  # an empty main file and no sub-agent: nothing is stored
                continue
            t = reconstruct(lane, ReconstructOptions(session_id=session),
                            now_ns=time.time_ns()).telemetry
            c = t.completeness
            subs = [a for a in t.agents if not a.is_main_thread]
            ordinary = [a for a in subs if a.agent_id not in said["compaction"]]
            placed = [a for a in ordinary if a.spawned_at_turn]
            totals["placed"] += len(placed)
            totals["placeable"] += len(said["placeable"])
            placed_not_placeable += sum(a.agent_id not in said["placeable"] for a in placed)
            totals["typed"] += sum(bool(a.agent_type) for a in ordinary)
            placed_untyped += sum(not a.agent_type for a in placed)
            totals["agents"] += len(ordinary)
            totals["compaction_linked"] += c.compaction_agents_linked
            totals["compaction"] += len(said["compaction"])
            totals["missing_reported"] += c.agents_spawned_not_stored
            missing_found += len(said["missing"])
            totals["unrecognised_lines"] += c.lines_unrecognised
            print(f"{session}: {len(subs)} sub-agent(s), {len(placed)} placed of "
                  f"{len(said['placeable'])} placeable, {c.agents_spawned_not_stored} missing "
                  f"reported of {len(said['missing'])}, {c.lines_unrecognised} unrecognised",
                  file=sys.stderr)
    print(f"{empty} session(s) with nothing stored (an empty main file, no sub-agent)",
          file=sys.stderr)
    print(f"placed but untyped: {placed_untyped}; placed though no call names them: "
          f"{placed_not_placeable}; spawns without a transcript found: {missing_found}",
          file=sys.stderr)
    missed = [name for name, ok in (
        ("placed == placeable", totals["placed"] == totals["placeable"]
         and not placed_not_placeable),
        ("every placed agent typed", not placed_untyped),
        ("every compaction agent linked", totals["compaction_linked"] == totals["compaction"]),
        ("every spawn without a transcript reported",
         totals["missing_reported"] == missing_found),
        ("no unrecognised lines", totals["unrecognised_lines"] == 0)) if not ok]
    if missed:
        print("MISSED: " + ", ".join(missed), file=sys.stderr)
    print(json.dumps(totals))
    if check and missed:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs (default 5; with --corpus, 3 paired rounds)")
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a target is missed")
    parser.add_argument("--real", action="store_true",
                        help="measure faithfulness over the real fixture sessions")
    parser.add_argument("--corpus", action="store_true",
                        help="the real fixture corpus against claude-code-log instead")
    parser.add_argument("--ccl", default="", help="the claude-code-log executable (--corpus)")
    args = parser.parse_args()
    if args.real:
        real(args.check)
        return
    if args.corpus:
        from bench.reconstruct_corpus import run_corpus

        run_corpus(args.repeat or 3, args.ccl, args.check)
        return
    args.repeat = args.repeat or 5
    session = build(args.seed, args.mb)
    transcript_bytes = sum(len(body) for _, body in session)
    with tempfile.TemporaryDirectory(prefix="abcd-bench-") as tmp:
        lane = store(Home(Path(tmp) / "home"), session)
        full_opts = ReconstructOptions(session_id=SESSION, mode="full", max_block_bytes=8192)
        spine_opts = ReconstructOptions(session_id=SESSION, mode="spine", max_block_bytes=8192)
        floor_s, lines = best(lambda: floor(lane), args.repeat)
        full_s, full = best(lambda: reconstruct(lane, full_opts, now_ns=time.time_ns()),
                            args.repeat)
        spine_s, spine = best(lambda: reconstruct(lane, spine_opts, now_ns=time.time_ns()),
                              args.repeat)
    c = full.telemetry.completeness
    subs = c.agents_total - 1
    print(f"session: {len(session)} records, {transcript_bytes / 1e6:.2f} MB of transcript, "
          f"{lines} lines", file=sys.stderr)
    print(f"tokens: {full.telemetry.tokens.total} over {full.telemetry.tokens.api_responses} "
          f"responses ({full.telemetry.tokens.usage_lines_seen} usage lines)", file=sys.stderr)
    print(f"floor {floor_s:.3f}s  full {full_s:.3f}s  spine {spine_s:.3f}s  (best of "
          f"{args.repeat}; pid {os.getpid()})", file=sys.stderr)
    figures = {
        "full_s": round(full_s, 4),
        "spine_s": round(spine_s, 4),
        "floor_s": round(floor_s, 4),
        "full_vs_floor": round(full_s / floor_s, 2),
        "artefact_mb": round(full.artefact_bytes / 1e6, 3),
        "spine_mb": round(spine.artefact_bytes / 1e6, 3),
        "agents_placed": subs - c.agents_without_spawn_point,
        "agents_total": subs,
    }
    missed = [name for name, ok in (
        ("full_vs_floor <= 3", full_s / floor_s <= 3),
        ("every agent placed", figures["agents_placed"] == subs == AGENTS),
        ("spine <= 30% of full", spine.artefact_bytes <= 0.3 * full.artefact_bytes)) if not ok]
    if missed:
        print("MISSED: " + ", ".join(missed), file=sys.stderr)
    print(json.dumps(figures))
    if args.check and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
