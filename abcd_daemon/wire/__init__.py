"""The wire protocol between the CLI and the daemon: frame rules, message types and a
sans-I/O codec.

Rules (DESIGN §3.7):
- A frame is a 4-byte big-endian length followed by that many bytes encoding one
  tagged-union Struct from :mod:`.messages`: msgpack (msgspec), or the same Struct as
  a JSON object (:mod:`.framing` says how the two are told apart).
- A frame longer than the limit is refused as soon as its length prefix is seen,
  before any of its payload is buffered.
- A connection opens with ``Hello`` (the client's protocol version) answered by
  ``Welcome`` or an ``Error``, in the Hello's format; then requests and replies
  alternate, one reply per request, in order. A streaming reply is a head message,
  ``Chunk`` frames, and an explicit ``End``.
- The codec (:mod:`.codec`) never touches a socket: ``feed(bytes)`` in, ``next_frame()``
  out. Both sides import these definitions; nothing else defines the protocol.

This package imports nothing itself: :mod:`.framing` is standard library only, for a
client that must not pay for msgspec (:mod:`abcd_client.json_client`); import
:mod:`.codec` and :mod:`.messages` by name.
"""
