"""Streaming capture: a file of many chunks stores exactly what one pass would, and
idempotency, supersession and refusal hold on streams (issue 16)."""

from __future__ import annotations

import dataclasses
import os

import pytest

from abcd_daemon.config import Config
from abcd_daemon.errors import RedactionResidual
from abcd_daemon.scanner import Identity, build_scanner
from abcd_daemon.store.capture import capture, capture_file
from abcd_daemon.store.chunks import OverCap
from abcd_daemon.store.lane import Lane
from abcd_daemon.store.meta import CaptureMeta
from abcd_daemon.store.records import list_records, open_body, read_body

from ..conftest import NEVER_CONVERGES

SHA = "d" * 40
T0 = 1_767_225_600 * 10**9
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O50Zb5Hm"
SMALL = dataclasses.replace(Config(), capture_chunk_bytes=64 * 1024)


def line(i: int, text: str = "hello") -> bytes:
    return b'{"type":"user","n":%d,"message":{"content":"%s"}}\n' % (i, text.encode())


@pytest.fixture
def scanner(tmp_path):
    return build_scanner(Identity(home=str(tmp_path / "home-of-me"), user="home-of-me"))


@pytest.fixture
def lane(home):
    return Lane(home, SHA)


def transcript(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def many_lines(n: int, secret_every: int = 997) -> bytes:
    return b"".join(line(i, f"token {TOKEN}" if i % secret_every == 0 else "x" * 80)
                    for i in range(n))


def no_temp_files(lane) -> bool:
    return not [n for n in os.listdir(lane.records) if n.startswith(".abcd-tmp-")]


def test_a_file_of_many_chunks_stores_what_one_pass_stores(tmp_path, home, scanner):
    data = many_lines(6000)  # ~700 KB: eleven 64 KiB chunks
    path = transcript(tmp_path, "t.jsonl", data)
    whole = capture(Lane(home, "e" * 40), data, CaptureMeta(session_id="s"), scanner=scanner,
                    config=Config(), now_ns=T0)
    streamed = capture_file(Lane(home, SHA), path, CaptureMeta(session_id="s"), scanner=scanner,
                            config=SMALL, now_ns=T0)
    body = read_body(Lane(home, SHA), streamed.record)
    assert body == read_body(Lane(home, "e" * 40), whole.record)
    assert TOKEN.encode() not in body
    assert streamed.record.redacted_secrets == whole.record.redacted_secrets == 7
    assert streamed.record.body_bytes == len(body)
    assert no_temp_files(Lane(home, SHA))


def test_the_frontmatter_is_written_after_the_body_with_its_counts(tmp_path, lane, scanner):
    path = transcript(tmp_path, "t.jsonl", many_lines(3000, secret_every=1000))
    result = capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner,
                          config=SMALL, now_ns=T0)
    [stored] = list_records(lane)
    assert stored.redacted_secrets == 3 and stored.name == result.record.name
    data = (lane.records / stored.name).read_bytes()
    assert data.startswith(b"---\nschema: 3\n") and b"redacted_secrets: 3\n" in data[:1024]


def test_streaming_capture_is_idempotent_on_the_source_hash(tmp_path, lane, scanner):
    path = transcript(tmp_path, "t.jsonl", many_lines(2000))
    first = capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner, config=SMALL, now_ns=T0)
    again = capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner, config=SMALL,
                         now_ns=T0 + 10**9)
    assert first.wrote and not again.wrote and again.record.name == first.record.name
    assert len(list_records(lane)) == 1


def test_a_longer_stream_supersedes_its_prefix_and_a_shorter_one_writes_nothing(tmp_path, lane, scanner):
    short = many_lines(1500)
    longer = short + many_lines(1500)
    meta = CaptureMeta(session_id="s")
    first = capture_file(lane, transcript(tmp_path, "a.jsonl", short), meta, scanner=scanner,
                         config=SMALL, now_ns=T0)
    grown = capture_file(lane, transcript(tmp_path, "b.jsonl", longer), meta, scanner=scanner,
                         config=SMALL, now_ns=T0 + 1)
    assert grown.wrote and grown.superseded == [first.record.name]
    shorter = capture_file(lane, transcript(tmp_path, "c.jsonl", short + line(1)), meta,
                           scanner=scanner, config=SMALL, now_ns=T0 + 2)
    assert shorter.wrote  # diverges from the stored body at its last line: both kept
    again = capture_file(lane, transcript(tmp_path, "d.jsonl", short[: short.index(b"\n", len(short) // 2) + 1]), meta,
                         scanner=scanner, config=SMALL, now_ns=T0 + 3)
    assert not again.wrote
    assert len(list_records(lane)) == 2


def test_the_first_length_bytes_of_a_growing_source_are_what_is_stored(tmp_path, lane, scanner):
    data = many_lines(100)
    path = transcript(tmp_path, "t.jsonl", data + b'{"type":"user","half')
    result = capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner, config=SMALL,
                          now_ns=T0, length=len(data))
    f, n = open_body(lane, result.record)
    with f:
        body = f.read()
    assert n == len(body) and body == read_body(lane, result.record)
    assert body.count(b"\n") == 100 and b"half" not in body


def test_a_residual_in_a_late_chunk_refuses_everything_and_names_its_line(tmp_path, home, lane):
    scanner = build_scanner(Identity(home="/nonexistent-home", user="nobody-here"), [NEVER_CONVERGES])
    data = many_lines(3000, secret_every=10**9) + line(3000, "abcdefghijklmnopQQ")
    path = transcript(tmp_path, "t.jsonl", data)
    with pytest.raises(RedactionResidual) as info:
        capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner, config=SMALL, now_ns=T0)
    frame_lines = 8  # seven lineage scalars and the frame end
    assert info.value.lines == [3001 + frame_lines]
    assert list_records(lane) == [] and no_temp_files(lane)


def test_a_line_over_the_line_cap_refuses_the_capture_and_writes_nothing(tmp_path, lane, scanner):
    data = line(0) + line(1, "y" * 5000) + line(2)
    config = dataclasses.replace(SMALL, max_line_bytes=4096)
    with pytest.raises(OverCap) as info:
        capture_file(lane, transcript(tmp_path, "t.jsonl", data), CaptureMeta(session_id="s"),
                     scanner=scanner, config=config, now_ns=T0)
    assert "line 2" in str(info.value) and "max_line_bytes" in str(info.value)
    assert list_records(lane) == [] and no_temp_files(lane)
    raised = dataclasses.replace(config, max_line_bytes=8192)
    assert capture_file(lane, transcript(tmp_path, "t.jsonl", data), CaptureMeta(session_id="s"),
                        scanner=scanner, config=raised, now_ns=T0).wrote


def test_a_transcript_over_the_file_cap_is_refused_before_a_byte_is_redacted(tmp_path, lane, scanner):
    config = dataclasses.replace(SMALL, max_transcript_bytes=4096)
    path = transcript(tmp_path, "t.jsonl", many_lines(100))
    with pytest.raises(Exception) as info:
        capture_file(lane, path, CaptureMeta(session_id="s"), scanner=scanner, config=config, now_ns=T0)
    assert "4096-byte cap" in str(info.value) or "4096-byte transcript cap" in str(info.value)
    with pytest.raises(OverCap, match="max_transcript_bytes"):
        capture(lane, many_lines(100), CaptureMeta(session_id="s"), scanner=scanner,
                config=config, now_ns=T0)
    assert not lane.records.exists() or list_records(lane) == []


def test_a_pem_key_across_a_chunk_budget_is_masked_whole(tmp_path, lane, scanner):
    body = "".join(f"MIIEowIBAAKCAQEA{i:04d}Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
                   for i in range(40))
    pem = ("-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----\n").encode()
    text = b"notes\n" * 10 + pem + b"after\n"
    config = dataclasses.replace(SMALL, capture_chunk_bytes=64 * 1024 // 64)
    result = capture_file(lane, transcript(tmp_path, "t.txt", text), CaptureMeta(session_id="s"),
                          scanner=scanner, config=config, now_ns=T0)
    stored = read_body(lane, result.record)
    assert b"MIIEowIBAAKCAQEA0001" not in stored and b"after\n" in stored
