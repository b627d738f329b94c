"""No payload value reaches a log or a reason, and nothing logged can forge a line.

The real path: ``hooks/abcd-hook`` → spool → a daemon started by ``abcd daemon start``
(so its log is the real ``ABCD_HOME/daemon.log``). Secret-shaped values are planted in
every payload field intake reads and in the hook's event argument, each case driven to
a real intake failure; then every log and reason abcd wrote is grepped for them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from abcd_daemon.intake.reasons import Scrubber, describe

from ..conftest import make_repo
from ..daemon.procs import env_for, run_shim, shim_log, wait_for

SECRETS = {
    "event": "ghp_EvEnTaRgUmEnT0123456789abcdefghijKLMN",
    "cwd": "AKIAIOSFODNN7CWDSECRET",
    "transcript_path": "xoxb-123456789012-transcriptpath-secret",
    "session_id": "glpat-SeSsIoNiDsEcReT0123456789",
    "agent_id": "sk-ant-api03-AgentIdSecretValue0123456789",
    "agent_type": "ghp_AgEnTtYpEsEcReT0123456789abcdefghijKL",
    "hook_event_name": "ghp_HoOkEvEnTnAmE0123456789abcdefghijKLM",
    "extra": "ghp_ExTrAfIeLd0123456789abcdefghijklmnopQR",
}
FORGED = "2026-01-01 00:00:00,000 abcd[1] INFO forged line"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} abcd\[\d+\] [A-Z]+ |^    \| ")
SHIM_LINE = re.compile(r"^\d{20}-\d+-[0-9a-f]{8} (subagent-stop|session-end|session-start|unknown-event) \S")


def abcd(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "abcd_client", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def forms(secret: str) -> list[str]:
    return [secret, json.dumps(secret)[1:-1], repr(secret)[1:-1]]


def test_planted_secrets_reach_no_log_and_no_reason_and_forge_no_line(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    make_repo(repo)
    home = Path(env["ABCD_HOME"])
    not_jsonl = tmp_path / "notes.txt"
    not_jsonl.write_text("plain text, no JSON object on any line\n")
    started = abcd(env, "daemon", "start")
    assert started.returncode == 0, started.stderr
    try:
        payloads = [
            # the event argument: an event abcd does not handle, with a forged log line
            (SECRETS["event"] + "\n" + FORGED, {"session_id": "s-event"}),
            # cwd: a directory that does not exist, so the repository cannot be resolved
            ("session-end", {"session_id": "s-cwd", "transcript_path": str(not_jsonl),
                             "cwd": f"/nonexistent/{SECRETS['cwd']}"}),
            # transcript_path: a file that does not exist
            ("session-end", {"session_id": "s-path", "cwd": str(repo),
                             "transcript_path": f"/nonexistent/{SECRETS['transcript_path']}/t.jsonl"}),
            # session_id: not a usable id (it climbs)
            ("session-end", {"session_id": f"../{SECRETS['session_id']}", "cwd": str(repo)}),
            # agent_id: not a usable id
            ("subagent-stop", {"session_id": "s-agent", "cwd": str(repo),
                               "agent_id": f"{SECRETS['agent_id']}/x",
                               "agent_transcript_path": str(not_jsonl)}),
            # agent_type with a line break (dropped with a warning), hook_event_name and an
            # unknown field, on a transcript that is no JSONL file
            ("subagent-stop", {"session_id": "s-type", "cwd": str(repo), "agent_id": "a1b2c3d4",
                               "agent_type": SECRETS["agent_type"] + "\n" + FORGED,
                               "hook_event_name": SECRETS["hook_event_name"],
                               "note": SECRETS["extra"], "agent_transcript_path": str(not_jsonl)}),
        ]
        for event, payload in payloads:
            assert run_shim(event, payload, env).returncode == 0
        wait_for(lambda: not os.listdir(home / "spool" / "new"), what="intake to take every payload")
        failed = home / "spool" / "failed"
        wait_for(lambda: len(list(failed.glob("*.reason"))) == len(payloads) - 1,
                 what="a reason for every failure (the unhandled event is dropped, not failed)")
        staged = abcd(env, "history", "staged", cwd=repo)
    finally:
        assert abcd(env, "daemon", "stop").returncode == 0

    written = {p: p.read_text(errors="replace") for p in
               [*failed.glob("*.reason"), *home.glob("daemon.log*"), home / "daemon.stderr",
                home / "spool" / "shim.log", home / "status.json"]}
    written["abcd history staged"] = staged.stdout + staged.stderr
    for where, text in written.items():
        for field, secret in SECRETS.items():
            for form in forms(secret):
                assert form not in text, f"the planted {field} value is in {where}"
    log = (home / "daemon.log").read_text().splitlines()
    assert log and all(LOG_LINE.match(line) for line in log), "a log line abcd did not start"
    assert "intake dropped" in "\n".join(log) and "intake failed" in "\n".join(log)
    shim = shim_log(env)
    assert len(shim) == len(payloads) and all(SHIM_LINE.match(line) for line in shim), shim
    # Nothing is lost: each refused payload is kept whole, owner-only, beside its reason.
    kept = sorted(failed.glob("*.json"))
    assert len(kept) == len(payloads) - 1
    raw = b"".join(p.read_bytes() for p in kept)
    for field in ("cwd", "transcript_path", "session_id", "agent_id", "agent_type"):
        assert SECRETS[field].encode() in raw
    assert oct(failed.stat().st_mode & 0o777) == "0o700"
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in failed.iterdir())
    reasons = "\n".join(p.read_text() for p in failed.glob("*.reason"))
    assert "<cwd, " in reasons and "<transcript_path, " in reasons  # named by field and size
    assert "session_id <session_id, " in reasons and "usable agent_id (<agent_id, " in reasons


def test_a_value_is_replaced_in_its_plain_json_and_repr_forms_longest_first():
    value = 'C:\\Users\\me "quoted" ghp_0123456789'
    scrub = Scrubber({value: describe("cwd", value), "ghp_0123456789": "<short>"})
    for form in (value, json.dumps(value)[1:-1], repr(value)[1:-1]):
        assert scrub(f"could not use {form!s} here") == f"could not use {describe('cwd', value)} here"
    assert scrub("only ghp_0123456789 alone") == "only <short> alone"


def test_short_values_and_event_names_are_not_mistaken_for_payload_text():
    payload = json.dumps({"session_id": "s1", "hook_event_name": "SubagentStop",
                          "cwd": "/tmp", "ghp_KeyNamesAreNotQuotedEither0123": "value-long"}).encode()
    scrub = Scrubber.of_payload(payload)
    message = "the SubagentStop payload from s1 in /tmp carries no agent_id"
    assert scrub(message) == message
    assert scrub("saw value-long") == "saw <a payload field, 10 characters>"
