"""Is this line one JSON document? Answered without building the document.

The JSON guard (``pipeline``) asks it of every line redaction changed, before and
after masking, and a transcript line may be hundreds of MiB: decoding it into
Python objects would cost several times the line. Contract of :func:`is_json`:

- true exactly when the bytes are one JSON document (structure, string escapes,
  surrogate pairs: msgspec's ``Raw`` decode, which checks them and builds nothing)
  *and* valid UTF-8 (an incremental decoder, in :data:`STEP`-byte pieces, so the
  check holds at most one piece's text at a time);
- one difference from a full decode, on the strict side: a number too large for a
  float (``1e999``) counts as JSON. The guard only ever demands more of such a
  line (it must still be JSON after masking), never less;
- a document nested past the decoder's depth is not one (we cannot check it);
- accepts ``bytes`` or a ``memoryview`` of them (no copy is made); never raises.
"""

from __future__ import annotations

import codecs

import msgspec

#: Bytes of the line decoded as UTF-8 at a time.
STEP = 1 << 20
_RAW = msgspec.json.Decoder(msgspec.Raw)


def is_json(line: bytes | memoryview) -> bool:
    """See the module contract."""
    try:
        _RAW.decode(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return False
    return _utf8(line)


def _utf8(data: bytes | memoryview) -> bool:
    view = memoryview(data)
    if len(view) <= STEP:
        try:
            codecs.utf_8_decode(view, "strict", True)
        except UnicodeDecodeError:
            return False
        return True
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        for at in range(0, len(view), STEP):
            decoder.decode(view[at : at + STEP], False)
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True
