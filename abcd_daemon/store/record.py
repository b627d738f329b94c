"""The record file format: schema-3-compatible frontmatter plus the redacted body.

Pure: bytes in, values out, and back. Rules (reference §1.2-1.3):
- The file starts with ``---\\n``; the header ends at the first ``\\n---\\n`` (byte-exact;
  any other fence is refused). Header lines are ``key: value``, split at the first
  ``": "``; unknown keys and lines without ``": "`` are ignored.
- Writer order is fixed; lineage keys are omitted when empty; ``spawn_depth`` only
  when > 0; the body is always newline-terminated.
- ``session_id``, ``root_commit`` and ``source_sha256`` are required on read.
  Schema 1 records (no lineage keys) read as main-thread records.
- The filename is a readable convenience and is never parsed back.
"""

# No `from __future__ import annotations`: a wire type (see abcd_daemon/wire/messages.py).

import datetime as _dt
import re

from ..errors import AbcdError
from .meta import FRAMED_SCALARS, Lineage

SCHEMA = 3
FENCE = b"---\n"
_END = b"\n---\n"

#: The lineage's string fields, written in this order when set (``spawn_depth`` after
#: them, when above 0): the frame order redaction uses, one list.
_STRING_KEYS = FRAMED_SCALARS


class RecordFormatError(AbcdError):
    """A record file that does not parse; it is skipped by listings and named by reads."""


class Record(Lineage, kw_only=True, omit_defaults=True):
    """One stored record's frontmatter (its :class:`~.meta.Lineage` inherited). ``name``
    is the file's basename (set on read)."""

    session_id: str
    root_commit: str
    source_sha256: str
    captured_at: str = ""
    schema: int = SCHEMA
    source_kind: str = "native"
    source_tool: str = ""
    redacted_secrets: int = 0
    redacted_home_paths: int = 0
    #: The scanner that redacted it: ``<ruleset> <version> + abcd <n>`` ("" before
    #: the field existed). ``abcd history rescan`` re-redacts records of another.
    scanner: str = ""
    context_stamps: tuple[str, ...] = ()
    name: str = ""
    body_bytes: int = 0

    @property
    def captured_ns(self) -> int:
        """``captured_at`` as integer nanoseconds since the epoch (0 when absent)."""
        return parse_rfc3339_ns(self.captured_at) if self.captured_at else 0


def format_rfc3339_ns(ns: int) -> str:
    """RFC 3339 UTC with nanoseconds, trailing zeros trimmed (Go's RFC3339Nano)."""
    seconds, frac = divmod(ns, 1_000_000_000)
    stamp = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        stamp += "." + f"{frac:09d}".rstrip("0")
    return stamp + "Z"


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})"
)


def parse_rfc3339_ns(text: str) -> int:
    """Parse RFC 3339 (any fraction up to ns) to ns since the epoch; ValueError if malformed."""
    m = _RFC3339.fullmatch(text)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    y, mo, d, h, mi, s, frac, tz = m.groups()
    try:
        base = _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=_dt.timezone.utc)
        if tz not in ("Z", "z"):
            sign = 1 if tz[0] == "+" else -1
            base -= sign * _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
    except OverflowError:  # an offset that moves the time out of years 1-9999
        raise ValueError(f"not a representable time: {text!r}") from None
    ns = (frac or "").ljust(9, "0")
    return int(base.timestamp()) * 1_000_000_000 + int(ns)


def compact_stamp(ns: int) -> str:
    """The 26-character filename stamp ``YYYYMMDDTHHMMSS.nnnnnnnnnZ``."""
    seconds, frac = divmod(ns, 1_000_000_000)
    day = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    return f"{day}.{frac:09d}Z"


def record_filename(record: Record) -> str:
    """``<stamp>-<session>.md`` or ``<stamp>-<session>-agent-<agent>.md``."""
    stamp = compact_stamp(record.captured_ns)
    if record.agent_id:
        return f"{stamp}-{record.session_id}-agent-{record.agent_id}.md"
    return f"{stamp}-{record.session_id}.md"


def format_record(record: Record, body: bytes) -> bytes:
    """Serialise frontmatter and body. The body gains a final newline if it lacks one."""
    lines = [
        f"schema: {record.schema}",
        f"session_id: {record.session_id}",
        f"root_commit: {record.root_commit}",
        f"captured_at: {record.captured_at}",
        f"source_kind: {record.source_kind}",
    ]
    if record.source_tool:
        lines.append(f"source_tool: {record.source_tool}")
    lines += [
        f"source_sha256: {record.source_sha256}",
        f"redacted_secrets: {record.redacted_secrets}",
        f"redacted_home_paths: {record.redacted_home_paths}",
    ]
    if record.scanner:
        lines.append(f"scanner: {record.scanner}")
    for key in _STRING_KEYS:
        value = getattr(record, key)
        if value:
            lines.append(f"{key}: {value}")
    if record.spawn_depth > 0:
        lines.append(f"spawn_depth: {record.spawn_depth}")
    if record.context_stamps:
        lines.append("context_stamps: " + ",".join(record.context_stamps))
    for line in lines:
        if "\n" in line or "\r" in line:
            raise RecordFormatError("a frontmatter value carries a line break; refusing")
    header = ("\n".join(lines) + "\n").encode("utf-8")
    if not body.endswith(b"\n"):
        body += b"\n"
    return FENCE + header + b"---\n" + body


def split_record(data: bytes) -> tuple[bytes, bytes]:
    """Split a record file into (header bytes, body bytes). Raises RecordFormatError."""
    if not data.startswith(FENCE):
        raise RecordFormatError("record does not start with a '---' frontmatter fence")
    end = data.find(_END, len(FENCE) - 1)
    if end < 0:
        raise RecordFormatError("record frontmatter has no closing '---' fence")
    return data[len(FENCE) : end + 1], data[end + len(_END) :]


def _int(value: str) -> int:
    try:
        return max(int(value), 0)
    except ValueError:
        return 0


def parse_header(header: bytes) -> Record:
    """Parse frontmatter bytes into a :class:`Record`. Raises RecordFormatError."""
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordFormatError("record frontmatter is not UTF-8") from None
    fields: dict[str, str] = {}
    for line in text.split("\n"):
        key, sep, value = line.partition(": ")
        if sep:
            fields.setdefault(key, value)
    for required in ("session_id", "root_commit", "source_sha256"):
        if not fields.get(required):
            raise RecordFormatError(f"record frontmatter missing a required field ({required})")
    captured = fields.get("captured_at", "")
    if captured:
        try:
            parse_rfc3339_ns(captured)
        except ValueError:
            raise RecordFormatError(f"record captured_at {captured!r} is not RFC 3339") from None
    kind = fields.get("source_kind", "native")
    tool = fields.get("source_tool", "")
    if kind.endswith("-import"):  # legacy fused kind, e.g. specstory-import
        fused_tool = kind[: -len("-import")]
        if tool and tool != fused_tool:
            raise RecordFormatError("record names two different source tools; refusing it")
        kind, tool = "import", fused_tool
    stamps = tuple(s for s in fields.get("context_stamps", "").split(",") if s)
    return Record(
        schema=_int(fields.get("schema", "1")) or 1,
        session_id=fields["session_id"],
        root_commit=fields["root_commit"],
        source_sha256=fields["source_sha256"],
        captured_at=captured,
        source_kind=kind,
        source_tool=tool,
        redacted_secrets=_int(fields.get("redacted_secrets", "0")),
        redacted_home_paths=_int(fields.get("redacted_home_paths", "0")),
        scanner=fields.get("scanner", ""),
        spawn_depth=_int(fields.get("spawn_depth", "0")),
        context_stamps=stamps,
        **{key: fields.get(key, "") for key in _STRING_KEYS},
    )


def parse_record(data: bytes, name: str = "") -> tuple[Record, bytes]:
    """Parse a whole record file into (Record with ``name`` and ``body_bytes``, body)."""
    header, body = split_record(data)
    record = parse_header(header)
    record.name = name
    record.body_bytes = len(body)
    return record, body
