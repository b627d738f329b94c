"""Sans-I/O framing: length-prefixed msgpack (or JSON) frames, fed by the byte and read
by frame.

``FrameDecoder.feed(data)`` buffers bytes; ``next_frame()`` returns the next complete
decoded message or ``None`` when more bytes are needed. A declared length over
``max_frame`` raises :class:`~abcd_daemon.errors.ProtocolError` immediately, before
the payload arrives, and the decoder refuses further use (the stream is desynchronised).
A whole frame that is no valid message raises :class:`~abcd_daemon.errors.BadMessage`
saying what is wrong with it (an unknown op, a mistyped field) and the decoder stays
usable: the frame's length kept the stream in step. The decoder never holds more than
``max_frame + 4`` bytes plus one ``feed`` call's worth.

Two payload formats share the framing (:mod:`.framing` states how they are told
apart). The JSON form is the same tagged Structs (bytes as base64), for a client with
no msgpack library — a script in any language, or a start-up-bound one that loads only
a stdlib JSON parser (:mod:`abcd_client.json_client`).
:attr:`FrameDecoder.last_json` says which format the last decoded frame used; the
server answers a connection in the format its Hello came in.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import UNDECODABLE, BadMessage, ProtocolError
from .framing import LENGTH as _LEN, MAX_FRAME, is_json
from .messages import Message, REQUEST_OPS

_ENCODER = msgspec.msgpack.Encoder()
_JSON_ENCODER = msgspec.json.Encoder()
_KNOWN_OPS = frozenset(t.__struct_config__.tag for t in Message.__args__)


def encode(message: Any) -> bytes:
    """The payload bytes of one message (no length prefix)."""
    return _ENCODER.encode(message)


def encode_frame(message: Any, *, max_frame: int = MAX_FRAME, as_json: bool = False) -> bytes:
    """One whole frame, msgpack (or JSON with ``as_json``). Raises ProtocolError if the
    message is over ``max_frame``."""
    payload = (_JSON_ENCODER if as_json else _ENCODER).encode(message)
    if len(payload) > max_frame:
        raise ProtocolError(f"a {len(payload)}-byte message is over the {max_frame}-byte frame limit")
    return _LEN.pack(len(payload)) + payload


class FrameDecoder:
    """Incremental decoder of frames into :data:`~.messages.Message` values."""

    def __init__(self, *, max_frame: int = MAX_FRAME, type: Any = Message) -> None:
        self._max = max_frame
        self._buf = bytearray()
        self._need: int | None = None
        self._broken = False
        self._type = type
        self._decoder = msgspec.msgpack.Decoder(type)
        self._json_decoder: Any = None  # built on the first JSON frame
        self.last_json = False

    def expect(self, type: Any) -> None:
        """Decode the frames still to come as ``type`` (a Struct or a Union of them);
        bytes already buffered are kept."""
        self._type = type
        self._decoder = msgspec.msgpack.Decoder(type)
        self._json_decoder = None

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        if self._broken:
            raise ProtocolError("the stream is desynchronised; close the connection")
        self._buf += data
        self._check_length()

    def _check_length(self) -> None:
        if self._need is None and len(self._buf) >= 4:
            (length,) = _LEN.unpack_from(self._buf)
            if length > self._max:
                self._broken = True
                self._buf.clear()
                raise ProtocolError(
                    f"a frame of {length} bytes is over the {self._max}-byte limit; refused"
                )
            self._need = length

    def next_frame(self) -> Any | None:
        """The next decoded message, or None until a whole frame is buffered."""
        if self._broken:
            raise ProtocolError("the stream is desynchronised; close the connection")
        self._check_length()
        if self._need is None or len(self._buf) < 4 + self._need:
            return None
        end = 4 + self._need
        payload = bytes(self._buf[4:end])
        del self._buf[:end]
        self._need = None
        self.last_json = as_json = is_json(payload)
        if as_json and self._json_decoder is None:
            self._json_decoder = msgspec.json.Decoder(self._type)
        try:
            return (self._json_decoder if as_json else self._decoder).decode(payload)
        except UNDECODABLE as exc:
            raise explain(payload, exc) from None


def explain(payload: bytes, exc: Exception) -> BadMessage:
    """What is wrong with a frame that did not decode, in a sentence (the op it names,
    bounded; never the rest of its content)."""
    hint = (f"this daemon answers the ops {', '.join(REQUEST_OPS)}; a client and a daemon "
            "of different versions disagree — `abcd daemon stop`, then `abcd daemon start`")
    as_json = is_json(payload)
    try:
        raw = (msgspec.json if as_json else msgspec.msgpack).decode(payload)
    except RecursionError:
        return BadMessage("a frame nests deeper than any protocol message; refused", hint=hint)
    except UNDECODABLE:
        return BadMessage(f"a frame is not {'JSON' if as_json else 'msgpack'}; refused", hint=hint)
    op = raw.get("op") if isinstance(raw, dict) else None
    if not isinstance(op, str):
        return BadMessage("a message carries no 'op' saying what it asks; refused", hint=hint)
    shown = repr(op) if len(op) <= 64 else repr(op[:61] + "...")
    if op not in _KNOWN_OPS:
        return BadMessage(f"unknown op {shown}; refused", hint=hint)
    return BadMessage(f"a {shown} message is malformed ({exc}); refused", hint=hint)
