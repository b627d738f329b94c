"""One client connection: peer check, handshake, request/reply loop, with deadlines.

Rules:
- Every accepted connection rings the intake doorbell first (the shim connects and
  closes without a word; that is a doorbell, not an error).
- A peer of another uid is refused and logged (SO_PEERCRED), before any byte is read.
- Deadlines: the handshake and each request must arrive within ``REQUEST_DEADLINE_S``
  and every reply must be taken within ``SEND_DEADLINE_S``; a slow, silent or
  non-reading client is dropped, so it cannot pin a handler.
- Requests are small: a request frame over ``REQUEST_MAX_FRAME`` is refused on its
  length prefix.
- A whole frame that is no valid request — an unknown op, a field of the wrong type, a
  reply sent as a request — is answered with an ``ErrorReply`` saying so and naming the
  ops this daemon answers; the connection stays open (the stream is still in step).
- A frame that cannot be used otherwise — over the limit, or cut off by the client
  half-closing inside it — is answered with one ``ErrorReply`` saying which (best effort,
  the client may be gone), then the connection is closed: the stream is desynchronised.
- A connection is answered in the format its Hello came in: JSON frames for a JSON
  Hello, msgpack otherwise (:mod:`..wire.codec`); a refusal before any Hello decoded
  follows the refused frame's format.
"""

from __future__ import annotations

import logging
import os

import trio

from .. import __version__
from ..errors import BadMessage, ProtocolError
from ..wire import messages as m
from ..wire.codec import FrameDecoder, encode_frame
from ..peer import peer_uid
from .replies import answer

log = logging.getLogger("abcd.daemon")

REQUEST_DEADLINE_S = 10.0
SEND_DEADLINE_S = 30.0
REQUEST_MAX_FRAME = 1 << 20
_REQUESTS = m.Request.__args__


def _refusal(exc: BadMessage) -> m.ErrorReply:
    return m.ErrorReply(kind="ProtocolError", message=str(exc), hint=exc.hint,
                        exit_code=exc.exit_code)


async def _send(stream, message, *, as_json: bool = False) -> None:
    with trio.fail_after(SEND_DEADLINE_S):
        await stream.send_all(encode_frame(message, as_json=as_json))


def _sender(as_json: bool):
    """``send(stream, message)`` in one format, for :func:`.replies.answer`."""
    if not as_json:
        return _send

    async def send(stream, message) -> None:
        await _send(stream, message, as_json=True)

    return send


async def _receive(stream, decoder: FrameDecoder):
    """The next message, or None at EOF. Raises ProtocolError, trio.TooSlowError."""
    with trio.fail_after(REQUEST_DEADLINE_S):
        while True:
            message = decoder.next_frame()
            if message is not None:
                return message
            data = await stream.receive_some(65536)
            if not data:
                if decoder.buffered:
                    raise ProtocolError(f"the connection was closed {decoder.buffered} byte(s) into "
                                        "a frame that never finished; refused")
                return None
            decoder.feed(data)


async def serve_connection(stream: trio.SocketStream, daemon) -> None:
    """Serve one connection to completion; never raises."""
    daemon.ring()
    decoder = FrameDecoder(max_frame=REQUEST_MAX_FRAME)
    try:
        async with stream:
            try:
                await _converse(stream, daemon, decoder)
            except ProtocolError as exc:
                log.info("refused a malformed request: %s", exc)
                await _refuse(stream, exc, as_json=decoder.last_json)
    except (trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError,
            ConnectionError) as exc:
        log.debug("connection closed: %s", exc)
    except OSError as exc:
        log.debug("connection failed: %s", exc)
    except Exception:  # noqa: BLE001 - one connection must never take the daemon down
        log.exception("a connection failed unexpectedly; dropped it")


async def _converse(stream: trio.SocketStream, daemon, decoder: FrameDecoder) -> None:
    uid = peer_uid(stream.socket)
    if uid is None or uid != os.geteuid():
        log.warning("refused a connection from uid %s (this daemon serves uid %s only)",
                    uid, os.geteuid())
        return
    try:
        hello = await _receive(stream, decoder)
    except BadMessage as exc:
        await _sender(decoder.last_json)(stream, _refusal(exc))
        return
    if hello is None:
        return  # the doorbell
    send = _sender(decoder.last_json)
    if not isinstance(hello, m.Hello):
        await send(stream, m.ErrorReply(kind="ProtocolError",
                                         message="a connection must open with Hello",
                                         exit_code=2))
        return
    if hello.protocol != m.PROTOCOL_VERSION:
        await send(stream, m.ErrorReply(
            kind="ProtocolError",
            message=f"this daemon speaks protocol {m.PROTOCOL_VERSION}, the client "
                    f"{hello.protocol}",
            hint="restart the daemon after upgrading abcd: `abcd daemon stop`, then "
                 "`abcd daemon start`"))
        return
    await send(stream, m.Welcome(protocol=m.PROTOCOL_VERSION, daemon_version=__version__,
                                  pid=os.getpid(), home=daemon.store))
    while True:
        try:
            request = await _receive(stream, decoder)
        except BadMessage as exc:
            await send(stream, _refusal(exc))
            continue
        if request is None:
            return
        if not isinstance(request, _REQUESTS):
            await send(stream, _refusal(BadMessage(
                f"{type(request).__name__} is not a request this daemon answers; refused",
                hint=f"requests are the ops {', '.join(m.REQUEST_OPS)}")))
            continue
        await answer(daemon, stream, request, send)


async def _refuse(stream, exc: ProtocolError, *, as_json: bool) -> None:
    """Tell the client why its bytes were refused, if it still listens (in the format
    of its last whole frame); never raises."""
    try:
        with trio.move_on_after(1.0):
            await stream.send_all(encode_frame(m.ErrorReply(
                kind="ProtocolError", message=str(exc),
                hint="the connection is closed; open a new one and send whole frames"),
                as_json=as_json))
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass


async def serve(daemon, listener: trio.SocketListener, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Accept connections until the daemon stops; one task per connection."""
    async with trio.open_nursery() as nursery:
        task_status.started()
        while not daemon.stopping.is_set():
            try:
                stream = await listener.accept()
            except (trio.ClosedResourceError, OSError) as exc:
                if daemon.stopping.is_set():
                    return
                log.warning("accept failed: %s", exc)
                await trio.sleep(0.1)
                continue
            nursery.start_soon(serve_connection, stream, daemon)
