"""What ``abcd history show`` prints: the record's metadata, then its body handed over in
blocks (read from the store or arriving from the daemon), never held whole — and, for
``--json``, :func:`emit_json_with_body`: the document ``output.emit_json`` prints with
the body as its ``body`` string, written from a file a block at a time."""

from __future__ import annotations

import sys

from abcd_daemon.termsafe import sanitize_block

from . import output


def show_head(record, lane) -> None:
    """The metadata lines ``abcd history show`` prints before the body."""
    output.say(f"session:    {record.session_id}")
    if record.agent_id:
        output.say(f"agent:      agent {record.agent_id} ({record.agent_type or 'type unknown'})")
        if record.parent_agent_id:
            output.say(f"parent:     {record.parent_agent_id}")
        if record.spawn_depth:
            output.say(f"depth:      {record.spawn_depth}")
        output.say(f"siblings:   abcd history list --session {record.session_id}")
    output.say(f"captured:   {record.captured_at}")
    output.say(f"source:     {record.source_kind}")
    output.say(f"path:       {lane.records / record.name}")
    output.say(f"redacted:   secrets={record.redacted_secrets} home={record.redacted_home_paths}")
    output.say("---")


class BodyPrinter:
    """Prints a body handed over in blocks as ``output.say(body.rstrip("\\n"))`` prints
    it whole: whole lines at a time (decoded, home-folded and made terminal-safe line by
    line, which is what those steps are), trailing newlines held until more follows."""

    def __init__(self) -> None:
        self._partial = b""
        self._newlines = 0

    def write(self, block: bytes) -> None:
        data = self._partial + bytes(block)
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if cut:
            self._emit(data[:cut].decode("utf-8", errors="replace"))

    def _emit(self, text: str) -> None:
        body = text.rstrip("\n")
        if body:
            sys.stdout.write("\n" * self._newlines + sanitize_block(output.fold_home(body)))
            self._newlines = 0
        self._newlines += len(text) - len(body)

    def close(self) -> None:
        if self._partial:
            self._emit(self._partial.decode("utf-8", errors="replace"))
        sys.stdout.write("\n")
        sys.stdout.flush()


#: Stands for the body in the document until it is written (no record field holds it).
_BODY = "\x00abcd-body\x00"


def emit_json_with_body(fields: dict, held) -> None:
    """Print what ``output.emit_json(dict(fields, body=text))`` prints, ``text`` being
    the binary file ``held`` (from its start) decoded with replacement characters: the
    body's JSON string is written as whole lines of it are read (decoding, home-folding
    and JSON escaping are all line-local), never held whole."""
    import msgspec

    encode = msgspec.json.Encoder(order="deterministic").encode
    doc = msgspec.json.format(encode(output.fold_paths(dict(fields, body=_BODY))), indent=2)
    before, after = doc.decode("utf-8").split(encode(_BODY).decode("utf-8"), 1)
    write = sys.stdout.write
    write(before + '"')
    held.seek(0)
    partial = b""
    for block in iter(lambda: held.read(1 << 20), b""):
        data = partial + block
        cut = data.rfind(b"\n") + 1
        partial = data[cut:]
        if cut:
            write(encode(output.fold_home(data[:cut].decode("utf-8", "replace")))[1:-1].decode())
    if partial:
        write(encode(output.fold_home(partial.decode("utf-8", "replace")))[1:-1].decode())
    write('"' + after + "\n")
    sys.stdout.flush()
