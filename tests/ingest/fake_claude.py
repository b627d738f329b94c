"""A fake Claude Code: writes transcripts the way the harness does and fires its hooks
through the real shim.

Layout and line shapes follow ``tests/fixtures/claude-code-log/real_projects`` (every line
here is generated, none copied): ``<config>/projects/<escaped cwd>/<session>.jsonl``, one
line per content block of an assistant response (each repeating ``message.id``,
``requestId`` and ``usage``), tool results as user lines with ``toolUseResult``,
sub-agents in ``<session>/subagents/agent-<id>.jsonl`` with ``agent-<id>.meta.json``
beside, ``system`` lines after Stop hooks. Hook payloads carry ``session_id
transcript_path cwd hook_event_name`` plus each event's own fields.

Run as a process (``python -m tests.ingest.fake_claude SCRIPT.json``) it plays a script
of steps, so a test can SIGKILL a real harness mid-response.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "hooks" / "abcd-hook"


def escaped(cwd: Path) -> str:
    """The project folder name the harness derives from a cwd."""
    return str(cwd).replace("/", "-").replace(".", "-")


class FakeClaude:
    """One session of the harness in ``cwd``, writing under ``config_dir``."""

    def __init__(self, config_dir: Path, cwd: Path, env: dict, *, session: str = "",
                 hooks: bool = True) -> None:
        self.cwd = Path(cwd)
        self.env = env
        self.hooks = hooks
        self.session = session or str(uuid.uuid4())
        self.project = Path(config_dir) / "projects" / escaped(self.cwd)
        self.project.mkdir(parents=True, exist_ok=True)
        self.path = self.project / f"{self.session}.jsonl"
        self.agents: dict[str, Path] = {}
        self._parent: str | None = None
        self._n = 0

    # -- lines -------------------------------------------------------------------------
    def _envelope(self, kind: str, *, agent: str = "", parent=None, **extra) -> dict:
        self._n += 1
        line = {"parentUuid": parent, "isSidechain": bool(agent)}
        if agent:
            line["agentId"] = agent
        line.update(extra)
        line.update(type=kind, uuid=str(uuid.uuid4()),
                    timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                    userType="external", entrypoint="cli", cwd=str(self.cwd),
                    sessionId=self.session, version="2.1.114", gitBranch="main")
        return line

    def _response(self, blocks: list[dict], *, agent: str = "", parent=None) -> list[dict]:
        """One API response: a line per content block, same id, request and usage."""
        mid, req = f"msg_01{uuid.uuid4().hex[:22]}", f"req_011C{uuid.uuid4().hex[:18]}"
        usage = {"input_tokens": 3, "cache_read_input_tokens": 1200, "output_tokens": 40 * len(blocks)}
        out = []
        for block in blocks:
            message = {"model": "claude-opus-4-7", "id": mid, "type": "message", "role": "assistant",
                       "content": [block], "stop_reason": None, "usage": usage}
            out.append(self._envelope("assistant", agent=agent, parent=parent, message=message,
                                      requestId=req))
            parent = out[-1]["uuid"]
        return out

    @staticmethod
    def _append(path: Path, lines: list[dict], *, cut: bool = False) -> None:
        """Append ``lines``; with ``cut``, the last is written only half (a harness killed
        mid-write)."""
        encoded = [json.dumps(line, separators=(",", ":")) for line in lines]
        text = "".join(e + "\n" for e in encoded)
        if cut:
            text = text[: len(text) - 1 - len(encoded[-1]) // 2]
        with open(path, "a") as f:
            f.write(text)
            f.flush()

    def _write(self, lines: list[dict], *, cut: bool = False) -> None:
        self._append(self.path, lines, cut=cut)
        self._parent = lines[-1]["uuid"]

    # -- hooks -------------------------------------------------------------------------
    def payload(self, event: str, **extra) -> dict:
        return {"session_id": self.session, "transcript_path": str(self.path), "cwd": str(self.cwd),
                "permission_mode": "default", "hook_event_name": event, **extra}

    def fire(self, event: str, payload: dict) -> subprocess.CompletedProcess | None:
        if not self.hooks:
            return None
        res = subprocess.run([str(SHIM), event], input=json.dumps(payload).encode(), env=self.env,
                             capture_output=True, timeout=30, cwd=self.cwd)
        assert res.returncode == 0 and res.stdout == b"", res
        return res

    # -- what a session does -----------------------------------------------------------
    def start(self, source: str = "startup") -> None:
        self.fire("session-start", self.payload("SessionStart", source=source))

    def prompt(self, text: str, *, hook: bool = True) -> None:
        """The user's prompt (print mode fires no UserPromptSubmit: ``hook=False``)."""
        if hook:
            self.fire("user-prompt-submit", self.payload("UserPromptSubmit", prompt=text))
        self._write([self._envelope("user", parent=self._parent, promptId=str(uuid.uuid4()),
                                    message={"role": "user", "content": text})])

    def respond(self, text: str = "Done.", *, cut: bool = False) -> None:
        """A response with thinking, a tool call and its result, then text."""
        tool_id = f"toolu_01{uuid.uuid4().hex[:22]}"
        lines = self._response([{"type": "thinking", "thinking": "", "signature": "c2ln"},
                                {"type": "tool_use", "id": tool_id, "name": "Read",
                                 "input": {"file_path": f"{self.cwd}/README"}}], parent=self._parent)
        lines.append(self._envelope("user", parent=lines[-1]["uuid"],
                                    message={"role": "user", "content": [
                                        {"type": "tool_result", "tool_use_id": tool_id,
                                         "content": "root\n"}]},
                                    toolUseResult={"type": "text", "file": {"numLines": 1}},
                                    sourceToolAssistantUUID=lines[-1]["uuid"]))
        lines += self._response([{"type": "text", "text": text}], parent=lines[-1]["uuid"])
        self._write(lines, cut=cut)

    def spawn(self, agent_type: str = "Explore", *, depth: int = 0, flush_late: bool = False) -> str:
        """A sub-agent runs to completion (its own file and meta sidecar), SubagentStop
        fires, and the Task result lands in the main thread. ``flush_late``: the agent's
        last line is written after the hook fired, as the harness sometimes does."""
        agent = "a" + uuid.uuid4().hex[:16]
        folder = self.project / self.session / "subagents"
        folder.mkdir(parents=True, exist_ok=True)
        path = self.agents[agent] = folder / f"agent-{agent}.jsonl"
        meta = {"agentType": "general-purpose", "description": "look around"}
        if depth:
            meta.update(spawnDepth=depth, toolUseId=f"toolu_01{agent}")
        (folder / f"agent-{agent}.meta.json").write_text(json.dumps(meta))
        first = self._envelope("user", agent=agent, message={"role": "user", "content": "Look around."})
        body = [first] + self._response([{"type": "text", "text": "Looked."}], agent=agent,
                                        parent=first["uuid"])
        last = self._response([{"type": "text", "text": "Report: nothing odd."}], agent=agent,
                              parent=body[-1]["uuid"])
        self._append(path, body if flush_late else body + last)
        self.fire("subagent-stop", self.payload("SubagentStop", agent_id=agent, agent_type=agent_type,
                                                agent_transcript_path=str(path),
                                                stop_hook_active=False))
        if flush_late:
            self._append(path, last)
        tool_id = f"toolu_01{uuid.uuid4().hex[:22]}"
        call = self._response([{"type": "tool_use", "id": tool_id, "name": "Task",
                                "input": {"subagent_type": agent_type, "prompt": "Look around."}}],
                              parent=self._parent)
        call.append(self._envelope("user", parent=call[-1]["uuid"], message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": f"agentId: {agent}"}]},
            toolUseResult={"status": "completed", "agentId": agent}))
        self._write(call)
        return agent

    def stop(self) -> None:
        """The response is over: Stop fires, then the harness notes the hook ran."""
        self.fire("stop", self.payload("Stop", stop_hook_active=False))
        self._write([self._envelope("system", parent=self._parent, subtype="stop_hook_summary",
                                    hookCount=1, hookErrors=[], preventedContinuation=False,
                                    level="suggestion")])

    def end(self, reason: str = "prompt_input_exit") -> None:
        self.fire("session-end", self.payload("SessionEnd", reason=reason))

    def end_with_stdin_open(self, reason: str = "clear") -> "OpenHook":
        """SessionEnd as ``/clear`` fires it: the payload is written and stdin is never
        closed. Returns the running hook."""
        return OpenHook(self.env, self.cwd, self.payload("SessionEnd", reason=reason))

    def all_paths(self) -> list[Path]:
        return [self.path, *self.agents.values()]


class OpenHook:
    """A session-end hook whose stdin the harness left open."""

    def __init__(self, env: dict, cwd: Path, payload: dict) -> None:
        self.proc = subprocess.Popen([str(SHIM), "session-end"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.started = time.monotonic()
        self.proc.stdin.write(json.dumps(payload).encode())
        self.proc.stdin.flush()

    def finish(self, harness_timeout: float) -> tuple[int | None, float]:
        """Wait as the harness does, killing the hook after ``harness_timeout``. Returns
        (its exit status, or None when it had to be killed; seconds it ran)."""
        try:
            code = self.proc.wait(max(harness_timeout - (time.monotonic() - self.started), 0))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        elapsed = time.monotonic() - self.started
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()
        return code, elapsed


def main(argv=None) -> int:
    """Play a script: ``{"config_dir", "cwd", "session", "hooks", "ready", "steps":
    [[name, *args], …]}``. Step ``hang`` writes half a response, touches ``ready`` and
    waits to be killed."""
    script = json.loads(Path((argv or sys.argv)[1]).read_text())
    harness = FakeClaude(Path(script["config_dir"]), Path(script["cwd"]), dict(os.environ),
                         session=script["session"], hooks=script.get("hooks", True))
    for name, *args in script["steps"]:
        if name == "hang":
            harness.respond("never finished", cut=True)
            Path(script["ready"]).write_text("mid-response\n")
            time.sleep(3600)
        else:
            getattr(harness, name)(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
