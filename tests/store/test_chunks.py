"""Whole-line chunks: every byte once, in order, cut only where no PEM block can span."""

from __future__ import annotations

import hashlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcd_daemon.errors import RetryableError
from abcd_daemon.store.chunks import OverCap, iter_chunks, same_prefix


def chunks(data: bytes, *, line_cap=1 << 20, chunk_bytes=64, length=None):
    return list(iter_chunks(io.BytesIO(data), len(data) if length is None else length,
                            line_cap=line_cap, chunk_bytes=chunk_bytes))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"x")), max_size=30),
       st.booleans(), st.integers(min_value=1, max_value=200))
def test_chunks_are_the_bytes_in_order_as_whole_lines(lines, tail, budget):
    data = b"\n".join(lines) + (b"\n" if tail and lines else b"")
    out = list(iter_chunks(io.BytesIO(data), len(data), line_cap=1 << 20, chunk_bytes=budget))
    assert b"".join(out) == data
    assert all(c.endswith(b"\n") for c in out[:-1])


def test_a_chunk_holds_lines_up_to_the_budget_and_a_longer_line_alone():
    line = b'{"a":1}\n'  # 8 bytes
    long = b'{"a":"' + b"x" * 100 + b'"}\n'
    out = chunks(line * 5 + long + line, chunk_bytes=16)
    assert out == [line * 2, line * 2, line, long, line]


def test_a_line_over_the_line_cap_is_refused_whole():
    with pytest.raises(OverCap) as info:
        chunks(b'{"a":1}\n' + b"y" * 33 + b"\n", line_cap=32)
    assert info.value.reason == "line-too-long"
    assert "line 2" in str(info.value) and "32-byte line cap (max_line_bytes)" in str(info.value)
    assert "abcd history retry" in info.value.hint


def test_a_line_exactly_at_the_cap_is_kept():
    assert chunks(b"z" * 31 + b"\n", line_cap=32) == [b"z" * 31 + b"\n"]


def test_a_source_shorter_than_its_length_is_retryable_not_truncated():
    with pytest.raises(RetryableError, match="short"):
        chunks(b'{"a":1}\n', length=20)


def test_only_the_first_length_bytes_are_read_and_hashed():
    h = hashlib.sha256()
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n'
    out = list(iter_chunks(io.BytesIO(data), 16, line_cap=64, chunk_bytes=64, hasher=h))
    assert out == [data[:16]] and h.hexdigest() == hashlib.sha256(data[:16]).hexdigest()


def test_no_cut_between_a_pem_header_and_its_body_lines():
    pem = (b"-----BEGIN RSA PRIVATE KEY-----\n" + b"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n" * 6
           + b"-----END RSA PRIVATE KEY-----\n")
    text = b"some notes\n" + pem + b"after\n"
    out = chunks(text, chunk_bytes=16)
    joined = [c for c in out if b"BEGIN" in c]
    assert len(joined) == 1 and pem in joined[0]  # the block is in one chunk, whole


def test_a_json_line_after_a_named_header_lets_the_cut_happen():
    line = b'{"type":"user","message":{"content":"begin here"}}\n'
    out = chunks(line * 4, chunk_bytes=len(line))
    assert out == [line] * 4


def test_same_prefix_compares_block_by_block():
    a = io.BytesIO(b"abcdef" * 1000)
    assert same_prefix(a, io.BytesIO(b"abcdef" * 500 + b"x"), 3000)
    a.seek(0)
    assert not same_prefix(a, io.BytesIO(b"abcdef" * 500 + b"x"), 3001)
    assert not same_prefix(io.BytesIO(b"ab"), io.BytesIO(b"ab"), 3)  # a short read differs
