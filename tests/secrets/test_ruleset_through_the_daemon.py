"""The provider ruleset and generic detectors, through the real path: shim → spool →
daemon → staged → drained → record, then the CLI on the stored record. Nothing of a
planted secret may be left anywhere under ABCD_HOME."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path

from abcd_daemon.paths import Home
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.records import list_records

from ..conftest import make_repo
from ..daemon.procs import DaemonProc, env_for, run_shim, wait_for

ABCD = Path(sys.executable).with_name("abcd")
RND = random.Random(9)
PEM_BODY = "\n".join(base64.b64encode(bytes(RND.randrange(256) for _ in range(48))).decode() for _ in range(5))
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
SECRETS = {
    "gitlab": "glpat-" + "Qm4xT9vK2pLs8RwZ7nYb",
    "shopify": "shpat_" + "9f3a1c7e5b2d4f6a8c0e1b3d5f7a9c1e",
    "assignment": "Zq8XvT2mLw9RkP4sYb7NcH1dGf6JaE3uWo5KiQ0y",
    "stripe_webhook": "whsec_" + "Rn3vVDoPFw3uLYYeLC6GK4RgXBtsxw3I",
}


def _transcript(path: Path) -> None:
    lines = [
        {"type": "user", "sessionId": "sess-r", "message": {"role": "user", "content": "deploy it"}},
        {"type": "assistant", "sessionId": "sess-r", "message": {"content": [
            {"type": "tool_use", "id": "toolu_01Xk29qLm7Tz4vBn8RcW1yHs", "name": "Bash",
             "input": {"command": f"export GITLAB_TOKEN={SECRETS['gitlab']} && ./deploy.sh"}}]}},
        {"type": "user", "sessionId": "sess-r", "message": {"content": [
            {"tool_use_id": "toolu_01Xk29qLm7Tz4vBn8RcW1yHs", "type": "tool_result",
             "content": f"{PEM}\nshop={SECRETS['shopify']}\nACME_API_KEY={SECRETS['assignment']}",
             "is_error": False}]},
         "toolUseResult": {"stdout": f"{PEM}\n- {SECRETS['stripe_webhook']}", "stderr": ""}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def test_provider_and_generic_secrets_never_reach_the_store_through_the_daemon(tmp_path):
    env = env_for(tmp_path)
    repo = tmp_path / "repo"
    sha = make_repo(repo)
    transcript = tmp_path / "sess-r.jsonl"
    _transcript(transcript)
    daemon = DaemonProc(env, tmp_path / "d.log").wait_ready()
    try:
        payload = {"session_id": "sess-r", "cwd": str(repo), "hook_event_name": "SessionEnd",
                   "transcript_path": str(transcript), "reason": "exit"}
        assert run_shim("session-end", payload, env).returncode == 0
        lane = Lane(Home(env["ABCD_HOME"]), sha)
        [record] = wait_for(lambda: list_records(lane), 90, what="the record")
        # The staged copy (unredacted, by design) goes only after the record exists.
        wait_for(lambda: not any(lane.staging.glob("*.raw")), 30, what="the staged copy to go")
        assert record.scanner.startswith("kingfisher ") and record.redacted_secrets >= 5
        stored = _every_byte_under(Path(env["ABCD_HOME"]))
        for name, secret in SECRETS.items():
            assert secret[8:22].encode() not in stored, f"{name} reached the store"
        for chunk in PEM_BODY.split("\n"):
            assert chunk[10:30].encode() not in stored, "a PEM body line reached the store"
        body = (lane.records / record.name).read_bytes().split(b"\n---\n", 1)[1]
        assert all(json.loads(line) for line in body.splitlines())  # every line still JSON
        # The CLI, on the same store: the record is current, and redact agrees.
        res = subprocess.run([str(ABCD), "history", "rescan", "--json"], cwd=repo, env=env,
                             capture_output=True, timeout=120)
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert (doc["checked"], doc["current"], doc["rewritten"]) == (1, 1, 0)
        res = subprocess.run([str(ABCD), "redact", str(transcript)], cwd=repo, env=env,
                             capture_output=True, timeout=120)
        assert res.returncode == 0, res.stderr
        assert all(s[8:22].encode() not in res.stdout for s in SECRETS.values())
    finally:
        assert daemon.stop() == 0
    assert all(s[8:22].encode() not in (tmp_path / "d.log").read_bytes() for s in SECRETS.values())
