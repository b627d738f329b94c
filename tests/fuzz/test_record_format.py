"""Fuzzing the record file format (abcd_daemon/store/record.py; DESIGN §3.5).

Properties, beyond the hand examples of tests/store/test_record_format.py:
- any bytes, and any frontmatter-shaped bytes, parse to a Record or raise
  RecordFormatError — nothing else;
- for arbitrary field values, ``format_record`` either refuses (exactly when a value
  carries ``\\n``/``\\r``) or writes a file that ``parse_record`` reads back to the same
  values and body — except for the documented exceptions, each asserted as such
  (a required field left empty is refused on read; a legacy fused ``<tool>-import``
  kind reads as ``import`` + tool, and conflicts with another tool are refused).
"""

from __future__ import annotations

import msgspec
from hypothesis import strategies as st

from abcd_daemon.store.record import (Record, RecordFormatError, format_record,
                                      format_rfc3339_ns, parse_record)

from .fuzzing import fuzz, rfc3339_shaped

KEYS = ["schema", "session_id", "root_commit", "captured_at", "source_kind", "source_tool",
        "source_sha256", "redacted_secrets", "redacted_home_paths", "agent_id",
        "parent_agent_id", "agent_type", "spawn_depth", "spawn_tool_use_id", "lineage_source",
        "spawn_attribution", "adopted_project", "context_stamps"]
STRING_FIELDS = ["session_id", "root_commit", "source_sha256", "source_kind", "source_tool",
                 "agent_id", "parent_agent_id", "agent_type", "spawn_tool_use_id",
                 "lineage_source", "spawn_attribution", "adopted_project"]
INT_FIELDS = ["redacted_secrets", "redacted_home_paths", "spawn_depth"]

#: Any text a value could hold (no lone surrogates: nothing that reaches a record —
#: strict UTF-8 headers, msgspec-decoded sidecars — can carry one).
_any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_value_text = st.one_of(
    _any_text,
    st.sampled_from(["", " ", "---", ": ", "a: b", "x-import", "-import", "\n", "\r", "\r\n",
                     "a\nsession_id: forged", "\u2028", "\x85", "\x00", "schema: 9"]),
)
_valid_ns = st.integers(0, 2**63 - 1)
_rfc3339 = st.one_of(_valid_ns.map(format_rfc3339_ns), st.just(""))


def _line(key, value) -> bytes:
    return f"{key}: {value}".encode("utf-8", "surrogatepass")


@st.composite
def record_files(draw):
    """Bytes shaped like a record, with damage anywhere."""
    lines = draw(st.lists(st.one_of(
        st.tuples(st.sampled_from(KEYS), st.one_of(_value_text, _rfc3339,
                                                   st.integers(-(2**70), 2**70).map(str)))
        .map(lambda kv: _line(*kv)),
        st.binary(max_size=30),
    ), max_size=20))
    opener = draw(st.sampled_from([b"---\n", b"---\r\n", b"--- \n", b"", b"---"]))
    closer = draw(st.sampled_from([b"\n---\n", b"\n---", b"\n--- \n", b"\n", b"\n---\n---\n"]))
    body = draw(st.binary(max_size=200))
    return opener + b"\n".join(lines) + closer + body


@fuzz(st.one_of(st.binary(max_size=400), record_files()), examples=600)
def test_any_bytes_read_as_a_record_or_a_record_format_error(data):
    try:
        record, body = parse_record(data, "x.md")
    except RecordFormatError:
        return
    # Whatever parsed satisfies the reader's own contract.
    assert record.session_id and record.root_commit and record.source_sha256
    assert record.schema >= 1
    assert min(record.redacted_secrets, record.redacted_home_paths, record.spawn_depth) >= 0
    assert record.body_bytes == len(body) and data.endswith(body)


@st.composite
def records(draw):
    fields = {name: draw(_value_text) for name in STRING_FIELDS}
    fields.update({name: draw(st.integers(0, 2**63 - 1)) for name in INT_FIELDS})
    fields["schema"] = draw(st.integers(1, 2**63 - 1))
    fields["captured_at"] = draw(_rfc3339)
    fields["context_stamps"] = tuple(draw(st.lists(_value_text, max_size=3)))
    return Record(**fields), draw(st.binary(max_size=300))


def _expected(record: Record) -> dict:
    out = msgspec.structs.asdict(record)
    out["context_stamps"] = tuple(s for s in ",".join(record.context_stamps).split(",") if s)
    kind = record.source_kind
    if kind.endswith("-import"):
        out["source_kind"], out["source_tool"] = "import", kind[: -len("-import")]
    return out


def _refused_on_write(record: Record) -> bool:
    values = [getattr(record, f) for f in STRING_FIELDS + ["captured_at"]]
    values += list(record.context_stamps)
    return any("\n" in v or "\r" in v for v in values)


def _refused_on_read(record: Record) -> bool:
    if not (record.session_id and record.root_commit and record.source_sha256):
        return True
    kind, tool = record.source_kind, record.source_tool
    return kind.endswith("-import") and bool(tool) and tool != kind[: -len("-import")]


@fuzz(records(), examples=600)
def test_format_then_parse_gives_back_every_field_and_the_body(case):
    record, body = case
    try:
        data = format_record(record, body)
    except RecordFormatError:
        assert _refused_on_write(record), "refused a record that carries no line break"
        return
    assert not _refused_on_write(record), "wrote a value carrying a line break"
    # The header is exactly one line per written field: no value forged another line.
    header = data[4 : data.index(b"\n---\n") + 1]
    assert all(b": " in line for line in header.split(b"\n")[:-1])
    try:
        back, back_body = parse_record(data, "r.md")
    except RecordFormatError:
        assert _refused_on_read(record)
        return
    assert not _refused_on_read(record)
    got = msgspec.structs.asdict(back)
    got["name"], got["body_bytes"] = record.name, record.body_bytes
    assert got == _expected(record)
    assert back_body == (body if body.endswith(b"\n") else body + b"\n")


@fuzz(rfc3339_shaped, examples=300)
def test_a_captured_at_of_any_rfc3339_shape_reads_or_is_a_record_format_error(stamp):
    data = (f"---\nsession_id: s\nroot_commit: {'a' * 40}\nsource_sha256: x\n"
            f"captured_at: {stamp}\n---\nbody\n").encode()
    try:
        record, _ = parse_record(data)
    except RecordFormatError:
        return
    assert record.captured_at == stamp
