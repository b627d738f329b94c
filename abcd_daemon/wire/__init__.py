"""The wire protocol between the CLI and the daemon: message types and a sans-I/O codec.

Rules (DESIGN §3.7):
- A frame is a 4-byte big-endian length followed by that many bytes of msgpack
  (msgspec) encoding one tagged-union Struct from :mod:`.messages`.
- A frame longer than the limit is refused as soon as its length prefix is seen,
  before any of its payload is buffered.
- A connection opens with ``Hello`` (the client's protocol version) answered by
  ``Welcome`` or an ``Error``; then requests and replies alternate, one reply per
  request, in order. A streaming reply is a head message, ``Chunk`` frames, and an
  explicit ``End``.
- The codec (:mod:`.codec`) never touches a socket: ``feed(bytes)`` in, ``next_frame()``
  out. Both sides import these definitions; nothing else defines the protocol.
"""

from .codec import FrameDecoder, encode, encode_frame
from .messages import PROTOCOL_VERSION, Reply, Request

__all__ = ["FrameDecoder", "PROTOCOL_VERSION", "Reply", "Request", "encode", "encode_frame"]
