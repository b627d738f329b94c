"""Secrets never stored: every rule kind, planted in real transcripts, through the real
hook → daemon → store path, leaves no secret middle anywhere under ABCD_HOME.

One positive example per rule of the bundled table (``planting.planted_secrets``) is
planted into copies of a real Claude Code transcript in six encodings (``planting.
ENCODINGS``): a plain JSON string, a JSON document escaped twice inside a string, a
percent-encoded URL, a tool_result block, the ``cwd`` of every line, and the
SubagentStop payload's ``agent_type``. Each rule is one session: its main thread
carries the plain encoding (SessionEnd), each other encoding is one sub-agent
(SubagentStop). The real shim spools them, a real daemon stages, redacts and stores
them (or quarantines a transcript it will not pass, which is fine: the raw copy stays
owner-only in quarantine/).

The daemon runs as the identity the table's identity examples are written for
(``EXAMPLE_IDENTITY``: ``HOME=/Users/ada``, its names and e-mails as the git persona, its
GitHub handle as the repository's origin), so home folding and the identity kinds are
exercised deliberately rather than through whatever user runs the tests.

Asserted (invariant 2): the needle of every planted secret — its middle third — occurs
in no spelling in any byte under ABCD_HOME outside ``staging/`` and ``quarantine/``
(records, status.json, spool/ with shim.log and failed/, session notes, the daemon's own
log, which this test puts in the home on purpose), nor in any reconstructed artefact or
telemetry file.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from abcd_daemon.paths import Home
from abcd_daemon.reconstruct import ReconstructOptions, reconstruct
from abcd_daemon.scanner.bundled import BUNDLED_RULES, EXAMPLE_IDENTITY
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import FIXTURES, git, make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, wait_for
from . import planting
from .planting import ENCODINGS, UNGREPPABLE, Planted

#: A real main thread (v2.0.28) with text blocks, tool_use/tool_result pairs and a cwd
#: on every line.
FIXTURE = (FIXTURES / "real_projects" / "-Users-dain-workspace-danieldemmel-me-next"
           / "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl")
ABCD = Path(sys.executable).with_name("abcd")
EXCLUDED_DIRS = {"staging", "quarantine"}  # raw bytes live here, owner-only, by design


@dataclasses.dataclass(frozen=True)
class Case:
    """One planted transcript: which secret, how it was planted, where it went."""

    planted: Planted
    encoding: str
    session_id: str
    agent_id: str
    path: Path

    @property
    def event(self) -> str:
        return "subagent-stop" if self.agent_id else "session-end"


@dataclasses.dataclass
class Run:
    """What the pipeline left behind, for the assertions."""

    home: Path
    sha: str
    cases: list[Case]
    reconstructed: dict[str, bytes]  # "<session>.md" etc. → bytes
    daemon_log: str


# -- the identity the daemon runs as ------------------------------------------------

def identity_env(base: Path) -> dict:
    """The test environment with the example identity: HOME and the git persona."""
    names = [n for n in EXAMPLE_IDENTITY["names"] if n != EXAMPLE_IDENTITY["remote_user"]]
    emails = list(EXAMPLE_IDENTITY["emails"])
    return env_for(base, HOME=EXAMPLE_IDENTITY["home"],
                   GIT_AUTHOR_NAME=names[0], GIT_COMMITTER_NAME=names[-1],
                   GIT_AUTHOR_EMAIL=emails[0], GIT_COMMITTER_EMAIL=emails[-1])


def identity_repo(path: Path) -> str:
    """A real repository whose origin names the example GitHub handle; its root SHA."""
    sha = make_repo(path)
    url = f"https://github.com/{EXAMPLE_IDENTITY['remote_user']}/{EXAMPLE_IDENTITY['remote_repo']}.git"
    git("remote", "add", "origin", url, cwd=path)
    return sha


# -- planting ------------------------------------------------------------------------

def session_for(planted: Planted) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "abcd-secrets/" + planted.rule))


def agent_for(planted: Planted, encoding: str) -> str:
    return "a" + hashlib.sha256(f"{planted.rule}/{encoding}".encode()).hexdigest()[:16]


def write_cases(project: Path, plants: list[Planted]) -> list[Case]:
    """Write every planted transcript in the Claude Code layout; return the cases."""
    base = planting.load_lines(FIXTURE)
    cases = []
    for planted in plants:
        session = session_for(planted)
        for encoding in ENCODINGS:
            agent = "" if encoding == "plain" else agent_for(planted, encoding)
            lines = planting.as_thread(planting.plant(base, encoding, planted.example), session, agent)
            path = (project / f"{session}.jsonl" if not agent
                    else project / session / "subagents" / f"agent-{agent}.jsonl")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(planting.dump_lines(lines))
            cases.append(Case(planted, encoding, session, agent, path))
    return cases


def payload(case: Case, repo: Path, project: Path) -> dict:
    main = str(project / f"{case.session_id}.jsonl")
    body = {"session_id": case.session_id, "cwd": str(repo), "transcript_path": main}
    if not case.agent_id:
        return {**body, "hook_event_name": "SessionEnd", "reason": "exit"}
    agent_type = case.planted.example if case.encoding == "agent_type" else "general-purpose"
    return {**body, "hook_event_name": "SubagentStop", "agent_id": case.agent_id,
            "agent_type": agent_type, "agent_transcript_path": str(case.path)}


def submit(cases: list[Case], repo: Path, project: Path, env: dict) -> None:
    """Run the real shim once per case (concurrently, as a harness would)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda c: run_shim(c.event, payload(c, repo, project), env), cases))
    assert [r.returncode for r in results] == [0] * len(cases)


# -- settling and collecting ---------------------------------------------------------

def settled(home: Path, sha: str, expected: int) -> bool:
    """Every payload is taken and every transcript stored or quarantined."""
    lane = Lane(Home(home), sha)
    spool = home / "spool" / "new"
    pending = list(spool.glob("*.json")) if spool.exists() else []
    staged = list(lane.staging.glob("*.raw")) if lane.staging.exists() else []
    quarantined = list(lane.quarantine.glob("*.raw")) if lane.quarantine.exists() else []
    failed = list((home / "spool" / "failed").glob("*.json"))
    done = len(list_records(lane)) + len(quarantined) + len(failed)
    return not pending and not staged and done >= expected


def stored_files(home: Path):
    """(relative path, bytes) of every file under ``home`` outside staging/quarantine."""
    for directory, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if d not in EXCLUDED_DIRS]
        for name in files:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                yield str(path.relative_to(home)), path.read_bytes()


def reconstruct_all(home: Path, sha: str, sessions: list[str]) -> dict[str, bytes]:
    """Artefact and telemetry of every session, in-process from the stored records."""
    lane = Lane(Home(home), sha)
    out = {}
    for session in sessions:
        result = reconstruct(lane, ReconstructOptions(session_id=session, max_block_bytes=0),
                             now_ns=time.time_ns())
        out[result.artefact_name] = result.artefact
        out[result.telemetry_name] = result.telemetry_json()
    return out


def reconstruct_through_cli(session: str, repo: Path, out_dir: Path, env: dict) -> dict[str, bytes]:
    """The same through ``abcd history reconstruct`` (answered by the running daemon)."""
    out_dir.mkdir()
    res = subprocess.run([str(ABCD), "history", "reconstruct", session, "--out", str(out_dir),
                          "--max-block-bytes", "0"], cwd=repo, env=env, capture_output=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    return {"cli/" + p.name: p.read_bytes() for p in sorted(out_dir.iterdir())}


def leaks(files, plants: list[Planted]) -> list[str]:
    """Every (file, rule, spelling) where a planted secret's needle occurs."""
    found = []
    patterns = [(p, planting.leak_pattern(p)) for p in plants if p.kind not in UNGREPPABLE]
    for name, data in files:
        for planted, pattern in patterns:
            for match in pattern.finditer(data):
                found.append(f"{name}: {planted.rule} needle {match.group()!r} "
                             f"(example {planted.example!r})")
    return found


# -- the run ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    """Plant, hand over through the shim, let a real daemon store, reconstruct."""
    base = tmp_path_factory.mktemp("secrets")
    env = identity_env(base)
    home = Path(env["ABCD_HOME"])
    home.mkdir(mode=0o700)
    repo = base / "repo"
    sha = identity_repo(repo)
    project = base / "projects" / "-repo"
    plants = planting.planted_secrets()
    cases = write_cases(project, plants)
    daemon = DaemonProc(env, home / "daemon.log").wait_ready()
    try:
        submit(cases, repo, project, env)
        wait_for(lambda: settled(home, sha, len(cases)), 90, 0.1, what="every transcript stored")
        sessions = sorted({c.session_id for c in cases})
        rebuilt = reconstruct_all(home, sha, sessions)
        rebuilt.update(reconstruct_through_cli(sessions[0], repo, base / "cli-out", env))
    finally:
        assert daemon.stop() == 0
    return Run(home=home, sha=sha, cases=cases, reconstructed=rebuilt, daemon_log=daemon.read_log())


# -- the assertions --------------------------------------------------------------------

def test_every_rule_kind_is_planted_or_explained():
    """Every bundled rule yields a planted secret (its own example, found by itself);
    a kind that cannot be grepped for is listed with its reason."""
    planted = {p.rule: p for p in planting.planted_secrets()}
    missing = [r.name for r in BUNDLED_RULES if r.name not in planted]
    assert missing == [], f"rules with no positive example the rule itself finds: {missing}"
    kinds = {r.kind for r in BUNDLED_RULES}
    assert set(UNGREPPABLE) <= kinds, "UNGREPPABLE names a kind the table no longer has"
    for p in planted.values():
        assert len(p.needle) >= 3, f"{p.rule}: needle {p.needle!r} is too short to mean anything"


def test_every_planted_transcript_reached_a_record_or_quarantine(run):
    """Nothing was refused at intake, and every rule has stored records to look into
    (so the grep below is not vacuous)."""
    failed = sorted((run.home / "spool" / "failed").glob("*.reason"))
    assert failed == [], [p.read_text() for p in failed]
    lane = Lane(Home(run.home), run.sha)
    stored = {(r.session_id, r.agent_id) for r in list_records(lane)}
    by_rule: dict[str, int] = {}
    for case in run.cases:
        by_rule.setdefault(case.planted.rule, 0)
        by_rule[case.planted.rule] += (case.session_id, case.agent_id) in stored
    unstored = sorted(rule for rule, n in by_rule.items() if n == 0)
    assert unstored == [], f"rules whose every planted transcript was quarantined: {unstored}"


def test_no_secret_middle_is_stored_anywhere_under_abcd_home(run):
    """Records, status, spool (shim.log, failed/), notes, the daemon log: zero hits."""
    plants = sorted({c.planted for c in run.cases}, key=lambda p: p.rule)
    hits = leaks(stored_files(run.home), plants)
    assert hits == [], "secrets stored outside staging/quarantine:\n" + "\n".join(hits)


def test_a_planted_agent_type_reaches_the_record_masked(run):
    """The payload's agent_type is not dropped on the way (so its absence from the store
    means redaction): every agent_type case has a record whose agent_type is set and is
    not the planted example."""
    lane = Lane(Home(run.home), run.sha)
    by_agent = {r.agent_id: r for r in list_records(lane)}
    unmasked = []
    for case in run.cases:
        if case.encoding != "agent_type" or case.agent_id not in by_agent:
            continue
        stored = by_agent[case.agent_id].agent_type
        if not stored or stored == case.planted.example:
            unmasked.append(f"{case.planted.rule}: {stored!r}")
    assert unmasked == []


def test_no_secret_middle_is_in_any_reconstructed_artefact_or_telemetry(run):
    """Reconstruct output (in-process and through the CLI) is built from redacted
    records, so it carries no secret either."""
    plants = sorted({c.planted for c in run.cases}, key=lambda p: p.rule)
    assert len(run.reconstructed) >= 2 * len(plants)
    hits = leaks(sorted(run.reconstructed.items()), plants)
    assert hits == [], "secrets in reconstruct output:\n" + "\n".join(hits)


def test_the_grep_finds_every_needle_where_it_was_planted(run):
    """The search is sharp: each case's own source (or, for agent_type, its payload)
    holds its needle, so a needle that leaked would have been found."""
    blind = []
    for case in run.cases:
        if case.planted.kind in UNGREPPABLE:
            continue
        where = (str(case.planted.example).encode("utf-8") if case.encoding == "agent_type"
                 else case.path.read_bytes())
        if not planting.leak_pattern(case.planted).search(where):
            blind.append(f"{case.planted.rule}/{case.encoding}")
    assert blind == []
