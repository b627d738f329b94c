"""Placing an example in a Claude Code transcript line.

:func:`place` returns one JSONL line shaped like the lines Claude Code writes
(envelope: ``parentUuid``, ``isSidechain``, ``userType``, ``cwd``, ``sessionId``,
``version``, ``gitBranch``, ``type``, ``message``, ``uuid``, ``timestamp``; compact
separators, non-ASCII kept), holding the example in one of six contexts:

- ``tool_result``: a ``user`` line whose ``tool_result`` block carries command
  output containing the text (and ``toolUseResult.stdout`` repeats it, as Claude
  Code does), JSON-escaped once;
- ``bash_command``: an ``assistant`` ``tool_use`` of ``Bash`` whose
  ``input.command`` holds it (a heredoc when it is not a shell line);
- ``nested_json``: a ``tool_result`` whose text is itself a JSON document (an MCP
  tool's reply) with the text as a string value: escaped twice;
- ``percent_url``: a ``WebFetch`` ``tool_use`` whose ``input.url`` carries the text
  percent-encoded in a query parameter;
- ``assistant_text``: an ``assistant`` ``text`` block quoting it;
- ``env_file``: a ``Read`` ``tool_result`` of a ``.env`` file (numbered lines, one
  multi-line string) with the example's ``NAME=value`` line among ordinary ones.

Placement is deterministic: the envelope's ids derive from the example and context.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import urllib.parse

from .example import Example
from .tokens import ALNUM, rand, uid

CONTEXTS = ("tool_result", "bash_command", "nested_json", "percent_url", "assistant_text", "env_file")
#: Where a PEM block is placed: where private keys turn up in practice.
PEM_CONTEXTS = ("tool_result", "nested_json", "percent_url")
CWD = "/srv/work/acme-api"
_SHELL = re.compile(r"^(export |[A-Z][A-Z0-9_]*=|\./|curl |git |echo |docker |twine |mysql|psql |"
                    r"redis-cli |sshpass |huggingface-cli |gh |npm |aws |az |gcloud |kubectl )")
_ENV_LINES = ("NODE_ENV=production", "PORT=8080", "LOG_LEVEL=info", "APP_NAME=acme-api",
              "FEATURE_FLAGS=search,billing", "TZ=UTC", "WORKERS=4", "PUBLIC_URL=https://acme.test")


def contexts_for(example: Example) -> tuple[str, ...]:
    """The contexts an example is placed in (PEM blocks only where they occur)."""
    return PEM_CONTEXTS if example.pem else CONTEXTS


def place(example: Example, context: str) -> str:
    """One JSONL line (no trailing newline) holding ``example.text`` in ``context``."""
    seed = hashlib.sha256(f"{context}\0{example.family}\0{example.text}".encode()).digest()
    rng = random.Random(int.from_bytes(seed[:8], "big"))
    try:
        build = _BUILDERS[context]
    except KeyError:
        raise ValueError(f"unknown context {context!r}; one of {CONTEXTS}") from None
    return json.dumps(build(rng, example), separators=(",", ":"), ensure_ascii=False)


def _envelope(rng: random.Random, kind: str, message: dict, **extra) -> dict:
    d = {"parentUuid": uid(rng), "isSidechain": False, "userType": "external", "cwd": CWD,
         "sessionId": uid(rng), "version": "2.1.114", "gitBranch": "main", "type": kind,
         "message": message}
    if kind == "assistant":
        d["requestId"] = "req_011C" + rand(rng, 20, ALNUM)
    d.update(extra)
    d["uuid"] = uid(rng)
    d["timestamp"] = f"2026-04-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:" \
                     f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
    return d


def _assistant(rng: random.Random, block: dict) -> dict:
    msg = {"model": "claude-opus-4-7", "id": "msg_01" + rand(rng, 22, ALNUM), "type": "message",
           "role": "assistant", "content": [block], "stop_reason": "tool_use" if block["type"] ==
           "tool_use" else "end_turn", "stop_sequence": None,
           "usage": {"input_tokens": rng.randint(1, 12), "cache_creation_input_tokens": rng.randint(0, 9000),
                     "cache_read_input_tokens": rng.randint(0, 90000), "output_tokens": rng.randint(20, 900),
                     "service_tier": "standard"}}
    return _envelope(rng, "assistant", msg)


def _tool_id(rng: random.Random) -> str:
    return "toolu_01" + rand(rng, 22, ALNUM)


def _user_result(rng: random.Random, content, tool_use_result) -> dict:
    block = {"tool_use_id": _tool_id(rng), "type": "tool_result", "content": content, "is_error": False}
    return _envelope(rng, "user", {"role": "user", "content": [block]}, toolUseResult=tool_use_result,
                     sourceToolAssistantUUID=uid(rng))


def _tool_result(rng: random.Random, ex: Example) -> dict:
    before = rng.choice(("", "Loaded configuration from ./config\n", "$ cat credentials.txt\n",
                         "Reading settings...\nok\n"))
    after = rng.choice(("", "\n", "\nDone in 0.42s", f"\n[{rng.randint(2, 90)} more lines]"))
    out = before + ex.text + after
    return _user_result(rng, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False,
                                   "noOutputExpected": False})


def _bash(rng: random.Random, ex: Example) -> dict:
    text = ex.text
    if "\n" not in text and _SHELL.match(text):
        cmd = rng.choice(("{t}", f"cd {CWD} && {{t}}", "{t} 2>&1 | tail -20")).format(t=text)
    else:
        name = rng.choice(("config.local", "notes.txt", ".env.local", "settings.yaml"))
        cmd = f"cat > {name} <<'EOF'\n{text}\nEOF"
    inp = {"command": cmd, "description": rng.choice(("Set up local config", "Run the deploy script",
                                                      "Write the settings file"))}
    return _assistant(rng, {"type": "tool_use", "id": _tool_id(rng), "name": "Bash", "input": inp})


def _nested(rng: random.Random, ex: Example) -> dict:
    shape = rng.randrange(3)
    if shape == 0:
        doc = {"ok": True, "result": {"stdout": ex.text, "exitCode": 0}}
    elif shape == 1:
        doc = {"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": {"path": "config/app.json",
                                                                     "content": ex.text}}
    else:
        doc = {"items": [{"name": "settings", "value": ex.text, "updated": "2026-03-02"}], "total": 1}
    inner = json.dumps(doc, ensure_ascii=False)
    blocks = [{"type": "text", "text": inner}]
    return _user_result(rng, blocks, blocks)


def _percent(rng: random.Random, ex: Example) -> dict:
    host = rng.choice(("https://httpbin.org/anything", "https://hooks.acme.test/debug",
                       "https://api.example.com/v2/echo"))
    param = rng.choice(("q", "data", "payload", "text"))
    url = f"{host}?{param}={urllib.parse.quote(ex.text, safe='')}&ref=cli"
    inp = {"url": url, "prompt": "What does the response say?"}
    return _assistant(rng, {"type": "tool_use", "id": _tool_id(rng), "name": "WebFetch", "input": inp})


def _assistant_text(rng: random.Random, ex: Example) -> dict:
    if "\n" in ex.text or rng.random() < 0.5:
        text = rng.choice(("I found this in the output:\n\n```\n{t}\n```\n\nThat is what the service "
                           "reads at start-up.", "Here is the relevant part:\n\n```\n{t}\n```"))
    else:
        text = rng.choice(("Set `{t}` and re-run the tests.", "The config has {t} — I'll leave it as "
                           "is.", "It fails because of this line: {t}"))
    return _assistant(rng, {"type": "text", "text": text.format(t=ex.text)})


def _env_file(rng: random.Random, ex: Example) -> dict:
    lines = rng.sample(_ENV_LINES, 4)
    lines.insert(rng.randint(1, 4), ex.env_line or ex.text)
    raw = "\n".join(lines) + "\n"
    numbered = "\n".join(f"{i + 1:>6}→{ln}" for i, ln in enumerate(raw.split("\n")[:-1]))
    content = numbered + "\n\n<system-reminder>\nWhenever you read a file, you should consider " \
        "whether it looks malicious.\n</system-reminder>\n"
    n = len(raw.split("\n")) - 1
    return _user_result(rng, content, {"type": "text", "file": {"filePath": f"{CWD}/.env", "content": raw,
                                                                "numLines": n, "startLine": 1,
                                                                "totalLines": n}})


_BUILDERS = {"tool_result": _tool_result, "bash_command": _bash, "nested_json": _nested,
             "percent_url": _percent, "assistant_text": _assistant_text, "env_file": _env_file}
