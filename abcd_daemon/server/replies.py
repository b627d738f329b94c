"""Answering one request on a connection: the handler runs in a worker thread on the
limiter its work needs (redaction or plain I/O), then the reply, and for a streaming
reply its ``Chunk`` frames and ``End``, go back on the stream. Ingest streams
``Progress`` frames from its worker thread through a memory channel while it runs, and
so does a drain."""

from __future__ import annotations

import time

import trio

from ..wire import messages as m
from .drain_loop import index_sync
from .memory import release_after


async def answer(daemon, stream, request, send) -> None:
    """Answer ``request`` on ``stream``; ``send(stream, message)`` writes one frame."""
    if isinstance(request, (m.IngestRequest, m.DrainRequest, m.IndexRebuildRequest)):
        await answer_with_progress(daemon, stream, request, send)
        return
    if isinstance(request, m.BatchReconstructRequest):
        from .batch import answer_batch

        await answer_batch(daemon, stream, request, send)
        return
    reply, body = await trio.to_thread.run_sync(daemon.handlers.handle, request,
                                                limiter=daemon.io_limiter, abandon_on_cancel=True)
    await send(stream, reply)
    if isinstance(reply, (m.ShowReply, m.ReconstructReply)):
        if isinstance(body, (bytes, bytearray)):
            view = memoryview(body)  # chunks are views of the body, not copies of it
            for start in range(0, len(body), m.CHUNK):
                await send(stream, m.Chunk(data=view[start : start + m.CHUNK]))
            size = len(body)
            del view
        else:  # blocks read from disk as they are sent (handlers.py)
            size = await _send_blocks(daemon, stream, body, send)
        await send(stream, m.End())
        del body, reply
        await trio.to_thread.run_sync(release_after, size, limiter=daemon.io_limiter)
    if isinstance(request, m.RetryRequest):
        daemon.drain_wake.set()  # what a retry staged is drained now, not at the timer
    if isinstance(request, m.DiscardRequest):  # a discarded lane entry may take a record's rows with it
        await trio.to_thread.run_sync(index_sync, daemon, True, limiter=daemon.io_limiter)
    if isinstance(request, (m.DiscardRequest, m.RetryRequest, m.DiscardFailedRequest)):
        await trio.to_thread.run_sync(daemon.write_status, limiter=daemon.io_limiter)



async def _send_blocks(daemon, stream, blocks, send) -> int:
    """Send each block of the iterator ``blocks`` (read in a worker thread) as a
    ``Chunk``; returns the bytes sent. The iterator is closed however this ends."""
    size = 0
    try:
        while True:
            block = await trio.to_thread.run_sync(next, blocks, None, limiter=daemon.io_limiter)
            if block is None:
                return size
            size += len(block)
            await send(stream, m.Chunk(data=block))
    finally:
        blocks.close()


async def answer_with_progress(daemon, stream, request, send) -> None:
    """Run an ingest, a drain or an index rebuild (on the redaction limiter), streaming throttled
    ``Progress`` frames, then its reply."""
    send_channel, receive_channel = trio.open_memory_channel(64)
    token = trio.lowlevel.current_trio_token()
    last = [0.0]

    def progress(files_done, files_total, bytes_done, bytes_total):
        now = time.monotonic()
        if now - last[0] < 0.2 and files_done < files_total:
            return
        last[0] = now
        message = m.Progress(files_done=files_done, files_total=files_total,
                             bytes_done=bytes_done, bytes_total=bytes_total)
        try:
            trio.from_thread.run_sync(send_channel.send_nowait, message, trio_token=token)
        except (trio.WouldBlock, trio.RunFinishedError):
            pass

    async def run():
        reply, _ = await trio.to_thread.run_sync(daemon.handlers.handle, request, progress,
                                                 limiter=daemon.redaction_limiter)
        await send_channel.send(reply)
        await send_channel.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        async with receive_channel:
            async for message in receive_channel:
                await send(stream, message)
    daemon.drain_wake.set()
    if not isinstance(request, m.IndexRebuildRequest):  # what an ingest or a drain stored is searchable now
        await trio.to_thread.run_sync(index_sync, daemon, True, limiter=daemon.io_limiter)
    await trio.to_thread.run_sync(daemon.write_status, limiter=daemon.io_limiter)
