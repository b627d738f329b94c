"""Fuzzing the sans-I/O wire codec (DESIGN §3.7): whatever bytes a peer sends, in
whatever chunks, the decoder either yields protocol messages or raises ProtocolError —
nothing else — and never holds more than ``max_frame + 4`` bytes plus one ``feed``.

Beyond tests/wire/test_codec.py (one blob, one feed; fixed messages): arbitrary
chunkings of garbage, of real frames followed by garbage, of length prefixes aimed at
the limit, of well-framed msgpack values of every shape under every message tag, and
of nesting bombs inside a well-formed frame.
"""

from __future__ import annotations

import struct

import msgspec
import pytest
from hypothesis import strategies as st

from abcd_daemon.errors import BadMessage, ProtocolError
from abcd_daemon.wire import messages as m
from abcd_daemon.wire.codec import FrameDecoder, encode_frame

from .fuzzing import bomb_depths, fuzz

TAGS = sorted(cls.__struct_config__.tag for cls in m._Msg.__subclasses__())
FIELDS = sorted({f for cls in m._Msg.__subclasses__() for f in cls.__struct_fields__})
_LEN = struct.Struct(">I")

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_i64 = st.integers(-(2**63), 2**63 - 1)
MESSAGES = st.one_of(
    st.builds(m.Hello, protocol=_i64, client=_text),
    st.builds(m.ListRequest, root_sha=_text, session_id=_text),
    st.builds(m.ShowRequest, root_sha=_text, key=_text),
    st.builds(m.DrainRequest, root_sha=_text, max_bytes=_i64, max_count=_i64),
    st.builds(m.ReconstructRequest, root_sha=_text, session_id=_text, mode=_text,
              max_block_bytes=_i64),
    st.builds(m.ErrorReply, kind=_text, message=_text, hint=_text, exit_code=_i64),
    st.builds(m.Progress, files_done=_i64, files_total=_i64, bytes_done=_i64, bytes_total=_i64),
    st.builds(m.Chunk, data=st.binary(max_size=300)),
    st.just(m.End()),
    st.just(m.StatusRequest()),
)

#: msgpack-encodable values of every shape (ints within msgpack's 64-bit range).
_mp_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                        st.floats(), _text, st.binary(max_size=40))
MP_VALUES = st.recursive(_mp_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(_text, st.sampled_from(FIELDS)),
                                                 inner, max_size=4)), max_leaves=10)


def _frame(payload: bytes) -> bytes:
    return _LEN.pack(len(payload)) + payload


@st.composite
def hostile_streams(draw):
    """(max_frame, chunks): valid frames, garbage, and length prefixes near the limit."""
    max_frame = draw(st.one_of(st.just(m.MAX_FRAME), st.integers(0, 4096)))
    pieces = draw(st.lists(st.one_of(
        st.binary(max_size=600),
        MESSAGES.map(lambda msg: encode_frame(msg, max_frame=1 << 30)),
        st.integers(0, 2**32 - 1).map(_LEN.pack),
        st.integers(max(max_frame - 2, 0), max_frame + 2).map(_LEN.pack),
        st.sampled_from([b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\xc1", b"\x80"]),
    ), max_size=12))
    stream = b"".join(pieces)
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=16)))
    bounds = [0, *cuts, len(stream)]
    return max_frame, [stream[a:b] for a, b in zip(bounds, bounds[1:])]


@fuzz(hostile_streams(), examples=400)
def test_arbitrary_bytes_in_arbitrary_chunks_raise_only_protocol_error_and_stay_bounded(case):
    max_frame, chunks = case
    decoder = FrameDecoder(max_frame=max_frame)
    for chunk in chunks:
        try:
            decoder.feed(chunk)
            # Between feed and drain the buffer holds at most a partial frame plus this chunk.
            assert decoder.buffered <= max_frame + 4 + len(chunk)
            while True:
                try:
                    message = decoder.next_frame()
                except BadMessage:
                    continue  # a whole frame, refused: the stream is still in step
                if message is None:
                    break
                assert isinstance(message, m.Message.__args__)
        except ProtocolError:
            # A desynchronised stream stays refused: nothing more is buffered or yielded.
            for call in (lambda: decoder.feed(b"\x00" * 8), decoder.next_frame):
                with pytest.raises(ProtocolError):
                    call()
            assert decoder.buffered <= max_frame + 4 + len(chunk)
            return
        # Fully drained: what is left is less than one whole frame.
        assert decoder.buffered < max_frame + 4


@st.composite
def sent_then_garbage(draw):
    messages = draw(st.lists(MESSAGES, min_size=1, max_size=6))
    stream = b"".join(encode_frame(msg) for msg in messages) + draw(st.binary(max_size=200))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    bounds = [0, *cuts, len(stream)]
    return messages, [stream[a:b] for a, b in zip(bounds, bounds[1:])]


@fuzz(sent_then_garbage(), examples=300)
def test_every_message_sent_before_garbage_is_decoded_intact_and_in_order(case):
    messages, chunks = case
    decoder = FrameDecoder()
    out = []
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            while (message := decoder.next_frame()) is not None:
                out.append(message)
    except ProtocolError:
        pass
    assert out[: len(messages)] == messages


@st.composite
def well_framed_values(draw):
    """One frame whose payload is valid msgpack of any shape, usually tagged as a
    real message, so the typed decoder (not the framer) is what gets fuzzed."""
    fields = draw(st.dictionaries(st.one_of(st.sampled_from(FIELDS), _text), MP_VALUES,
                                  max_size=5))
    if draw(st.booleans()):
        fields["op"] = draw(st.sampled_from(TAGS))
    value = draw(st.one_of(st.just(fields), MP_VALUES))
    return msgspec.msgpack.encode(value)


@fuzz(well_framed_values(), examples=400)
def test_a_well_framed_payload_of_any_shape_is_a_message_or_a_protocol_error(payload):
    decoder = FrameDecoder()
    decoder.feed(_frame(payload))
    try:
        message = decoder.next_frame()
    except ProtocolError:
        return
    assert isinstance(message, m.Message.__args__)
    assert decoder.buffered == 0


#: (depth, key, tag): a tagged message carrying an array nested ``depth`` deep under
#: ``key`` (built in the test, so a failing example prints small).
framed_bombs = st.tuples(bomb_depths,
                         st.one_of(st.sampled_from(FIELDS), _text.filter(lambda k: k != "op")),
                         st.sampled_from(TAGS))


@fuzz(framed_bombs, examples=60)
def test_a_frame_nested_past_the_decoders_depth_is_a_protocol_error(case):
    depth, key, tag = case
    payload = (b"\x82" + msgspec.msgpack.encode("op") + msgspec.msgpack.encode(tag)
               + msgspec.msgpack.encode(key) + b"\x91" * depth + b"\x01")
    decoder = FrameDecoder()
    decoder.feed(_frame(payload))
    try:
        decoder.next_frame()
    except ProtocolError:
        pass
