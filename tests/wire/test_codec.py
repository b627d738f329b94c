"""The sans-I/O codec: any chunking round-trips; oversized frames are refused early."""

import re
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcd_daemon.errors import ProtocolError
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

MESSAGES = [
    m.Hello(protocol=1, client="t"),
    m.ListRequest(root_sha="a" * 40, session_id="s"),
    m.ReconstructRequest(root_sha="b" * 40, session_id="s", mode="spine", max_block_bytes=10),
    m.Chunk(data=bytes(range(256)) * 10),
    m.ErrorReply(kind="InputError", message="bad", hint="fix", exit_code=2),
    m.End(),
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(MESSAGES), min_size=1, max_size=8), st.data())
def test_codec_round_trips_under_arbitrary_chunking(messages, data):
    stream = b"".join(encode_frame(msg) for msg in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    decoder = FrameDecoder()
    out = []
    last = 0
    for cut in cuts + [len(stream)]:
        decoder.feed(stream[last:cut])
        last = cut
        while (msg := decoder.next_frame()) is not None:
            out.append(msg)
    assert out == messages
    assert decoder.buffered == 0


def test_oversized_frame_is_refused_before_its_payload_is_buffered():
    decoder = FrameDecoder(max_frame=1024)
    with pytest.raises(ProtocolError, match="over the 1024-byte limit"):
        decoder.feed(struct.pack(">I", 100 << 20))
    assert decoder.buffered == 0
    with pytest.raises(ProtocolError):
        decoder.feed(b"more")


def test_a_whole_frame_that_is_no_message_is_refused_and_the_stream_stays_in_step():
    import msgspec

    from abcd_daemon.errors import BadMessage

    decoder = FrameDecoder()
    frames = [b"\xc1\xc1\xc1", msgspec.msgpack.encode({"op": "frobnicate"}),
              msgspec.msgpack.encode({"op": "list", "root_sha": 5}), msgspec.msgpack.encode([1])]
    decoder.feed(b"".join(struct.pack(">I", len(f)) + f for f in frames) + encode_frame(m.StatusRequest()))
    for expected in ("a frame is not msgpack", "unknown op 'frobnicate'",
                     "a 'list' message is malformed (Expected `str`, got `int` - at `$.root_sha`)",
                     "carries no 'op'"):
        with pytest.raises(BadMessage, match=re.escape(expected)) as caught:
            decoder.next_frame()
        assert "status, list, show" in caught.value.hint
    assert isinstance(decoder.next_frame(), m.StatusRequest)  # still in step


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_never_crash_or_grow_the_buffer_unbounded(blob):
    decoder = FrameDecoder(max_frame=4096)
    try:
        decoder.feed(blob)
        while decoder.next_frame() is not None:
            pass
    except ProtocolError:
        return
    assert decoder.buffered <= 4096 + 4


def test_encoding_an_oversized_message_is_refused():
    with pytest.raises(ProtocolError):
        encode_frame(m.Chunk(data=b"x" * 2048), max_frame=1024)


def test_json_frames_decode_to_the_same_messages_and_say_they_were_json():
    import msgspec

    decoder = FrameDecoder()
    for message in MESSAGES:
        decoder.feed(encode_frame(message, as_json=True))
        assert decoder.next_frame() == message and decoder.last_json
        decoder.feed(encode_frame(message))
        assert decoder.next_frame() == message and not decoder.last_json
    # a client with only a JSON library writes the same frame by hand
    payload = b'{"op": "hello", "protocol": 1, "client": "sh"}'
    decoder.feed(struct.pack(">I", len(payload)) + payload)
    assert decoder.next_frame() == m.Hello(protocol=1, client="sh")
    assert msgspec.json.decode(encode_frame(m.Chunk(data=b"\x00\xff"), as_json=True)[4:]) == {
        "op": "chunk", "data": "AP8="}  # bytes travel as base64


def test_a_malformed_json_frame_is_refused_in_words_and_the_stream_stays_in_step():
    from abcd_daemon.errors import BadMessage

    decoder = FrameDecoder()
    frames = [b'{"op": "status"', b'{"op": "frobnicate"}', b'{"op": "list", "root_sha": 5}']
    decoder.feed(b"".join(struct.pack(">I", len(f)) + f for f in frames)
                 + encode_frame(m.StatusRequest(), as_json=True))
    for expected in ("a frame is not JSON", "unknown op 'frobnicate'",
                     "a 'list' message is malformed (Expected `str`, got `int` - at `$.root_sha`)"):
        with pytest.raises(BadMessage, match=re.escape(expected)):
            decoder.next_frame()
        assert decoder.last_json
    assert isinstance(decoder.next_frame(), m.StatusRequest)
