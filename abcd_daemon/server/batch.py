"""Serving a batch reconstruct: many sessions, one request, one stream.

:func:`batch_messages` (synchronous, run in a worker thread) turns the core's
:func:`~abcd_daemon.reconstruct.batch.reconstruct_batch` into the frames of the reply:
``BatchPlanned`` first (so the client can draw a progress bar), then per session
``SessionReconstructed`` + its artefact as ``Chunk`` frames + ``End``, or
``SessionFailed``; ``BatchDone`` last. A refusal of the request itself (a bad date, an
ambiguous prefix) is one ``ErrorReply`` instead.

:func:`answer_batch` forwards those frames to the socket as they are made, through a
small channel: at most :data:`IN_FLIGHT` frames wait, so a corpus of any size never
sits in the daemon's memory at once, and a slow reader slows the worker rather than
growing a queue.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import trio

from ..wire import messages as m
from .handlers import error_reply
from .memory import release_after

#: Frames queued between the worker thread and the socket.
IN_FLIGHT = 8


def batch_messages(home, req: m.BatchReconstructRequest) -> Iterator[object]:
    """Every frame of the reply to ``req``, in order."""
    from ..reconstruct.batch import plan_batch, reconstruct_batch

    try:
        plan = plan_batch(home, root_sha=req.root_sha, all_repos=req.all_repos,
                              keys=list(req.session_ids), since=req.since)
    except BaseException as exc:  # noqa: BLE001 - every refusal becomes a reply
        yield error_reply(exc)
        return
    yield m.BatchPlanned(total=plan.total)
    for item in reconstruct_batch(home, plan, mode=req.mode,
                                  max_block_bytes=req.max_block_bytes, now_ns=time.time_ns()):
        if item.result is None:
            yield m.SessionFailed(session=item.session, error=error_reply(item.error))
            continue
        r = item.result
        yield m.SessionReconstructed(session=item.session, artefact_name=r.artefact_name,
                                     telemetry_name=r.telemetry_name,
                                     artefact_bytes=r.artefact_bytes,
                                     telemetry_json=r.telemetry_json())
        body = r.artefact
        for start in range(0, len(body), m.CHUNK):
            yield m.Chunk(data=body[start : start + m.CHUNK])
        yield m.End()
    yield m.BatchDone()


async def answer_batch(daemon, stream, request: m.BatchReconstructRequest, send) -> None:
    """Answer a batch on ``stream``; ``send(stream, message)`` writes one frame."""
    send_channel, receive_channel = trio.open_memory_channel(IN_FLIGHT)
    sent = [0]

    def produce() -> None:
        try:
            for message in batch_messages(daemon.handlers.home, request):
                if isinstance(message, m.Chunk):
                    sent[0] += len(message.data)
                trio.from_thread.run(send_channel.send, message)
        except BaseException as exc:  # noqa: BLE001 - a failure mid-stream is said, not lost
            if not isinstance(exc, (trio.Cancelled, trio.BrokenResourceError, trio.RunFinishedError)):
                try:
                    trio.from_thread.run(send_channel.send, error_reply(exc))
                except BaseException:  # noqa: BLE001 - the client is gone
                    pass
        finally:
            try:
                trio.from_thread.run(send_channel.aclose)
            except BaseException:  # noqa: BLE001 - the loop is gone
                pass

    async def run() -> None:
        await trio.to_thread.run_sync(produce, limiter=daemon.io_limiter)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        async with receive_channel:
            async for message in receive_channel:
                await send(stream, message)
    await trio.to_thread.run_sync(release_after, sent[0], limiter=daemon.io_limiter)
