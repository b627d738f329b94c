"""The entry points: one captured session in, one artefact and one telemetry file out.

- :func:`reconstruct_records` is the pure core: records and their bodies (or the error
  that stopped a body being read) in, a :class:`~.schema.Reconstruction` out. It reads
  no clock (``now_ns`` stamps the telemetry's ``generated_at`` and nothing else), writes
  nothing and knows no path except record basenames.
- :func:`reconstruct` loads one session's records from a lane (the only I/O here:
  listing and guarded reads; a body over ``STREAM_ABOVE`` is handed on as a source read
  on demand, never loaded) and calls the core.

The same records always give the same artefact bytes (invariant 6); only
``generated_at`` in the telemetry depends on ``now_ns``.

While a session is read and written, Python's cyclic collector is paused
(:mod:`~abcd_daemon.gcpause`: its tables are long-lived objects in no cycle).
"""

from __future__ import annotations

from ..errors import AbcdError, NotFoundError
from ..gcpause import paused
from ..ids import check_root_sha
from ..limits import STREAM_ABOVE
from ..store.lane import Lane
from ..store.empty_mains import main_was_empty
from ..store.record import Record
from ..store.body import body_of
from ..store.records import list_for_session, read_body
from .compaction import link_compactions
from .harness import parse_body
from .lean import Lean
from .placement import place, section_order
from .render import Document
from .schema import ReconstructOptions, Reconstruction
from .selection import select
from .spawns import missing_agents
from .telemetry import measure


def artefact_name(session_id: str) -> str:
    return f"{session_id}.md"


def telemetry_name(session_id: str) -> str:
    return f"{session_id}.telemetry.json"


def reconstruct_records(root_sha: str, loaded: list[tuple[Record, object]],
                        opts: ReconstructOptions, *, now_ns: int,
                        empty_main: bool = False, sink=None,
                        spill_dir=None) -> Reconstruction:
    """Reconstruct one session from its loaded records: each with its body's bytes, a
    source read on demand (``length`` and ``lines()``:
    :class:`~abcd_daemon.store.body.RecordBody`, read lean — :mod:`.lean`), or the
    exception that stopped it being read. ``empty_main``: the harness's
    main file was seen zero bytes (:mod:`~abcd_daemon.store.empty_mains`), so a missing
    main-thread record is reported as EMPTY rather than ABSENT.

    With ``sink`` (a binary file) the artefact is written there as it is rendered
    (its body held in a temp file in ``spill_dir`` meanwhile, :mod:`.spill`), and the
    Reconstruction's ``artefact`` is empty (``artefact_bytes`` says how much was
    written): the same bytes, never all in memory.

    Returns the :class:`~.schema.Reconstruction`. Raises
    :class:`~abcd_daemon.errors.InputError` for a malformed root SHA and
    :class:`~abcd_daemon.errors.NotFoundError` when ``loaded`` holds no record at all
    (a session with no main thread is NOT an error: it renders, labelled), and
    :class:`~abcd_daemon.errors.AbcdError` when a body read lean cannot have its temp
    file written (:mod:`.block_spill`: a full disk). Never raises
    on the content of a body: unreadable, non-UTF-8 or garbage bodies are reported in
    the completeness block instead.
    """
    with paused():
        return _reconstruct(root_sha, loaded, opts, now_ns, empty_main, sink, spill_dir)


def _reconstruct(root_sha: str, loaded: list[tuple[Record, object]],
                 opts: ReconstructOptions, now_ns: int, empty_main: bool, sink,
                 spill_dir) -> Reconstruction:
    check_root_sha(root_sha)
    session_id = opts.session_id
    threads, dropped = select(session_id, loaded)
    if not threads:  # no record at all (of this session)
        if empty_main:
            raise NotFoundError(
                f'session "{session_id}" has no records under {root_sha}: its main transcript '
                "was empty (zero bytes) when abcd saw it and it spawned no stored sub-agent",
                hint="there is nothing to reconstruct; `abcd history list` shows the sessions "
                     "stored here")
        raise NotFoundError(f'no records for session "{session_id}" under {root_sha}',
                            hint="`abcd history list` shows the sessions stored here")
    lean = None
    for thread in threads:
        if thread.body is None:
            continue
        if not isinstance(thread.body, bytes) and lean is None:
            lean = Lean((record.agent_id for record, _ in loaded), spill_dir,
                        render_cap=opts.max_block_bytes)
        try:
            thread.transcript = parse_body(thread.body, None if isinstance(thread.body, bytes)
                                           else lean)
        except OSError as exc:  # the lean read's temp file (:mod:`.block_spill`)
            raise AbcdError(
                f"could not reconstruct session {session_id!r}: the temp file its record "
                f"{thread.record.name!r} is read through could not be written "
                f"({exc.strerror or type(exc).__name__})",
                hint="free some space in the temp directory and run it again") from None
        thread.body = None  # parsed; the bytes are no longer needed
    order = section_order(threads)
    placements, indexes = place(threads)
    link_compactions(order, placements, indexes)
    missing = missing_agents(threads, order, placements, indexes)
    telemetry = measure(session_id, root_sha, opts.mode, now_ns, threads, order,
                        placements, dropped, records_found=len(loaded), missing=missing,
                        empty_main=empty_main)
    document = Document(telemetry, threads, order, placements,
                        max_block_bytes=opts.max_block_bytes)
    if sink is not None:
        artefact, size = b"", document.write(sink, spill_dir)
    else:
        artefact = document.render().encode("utf-8", "replace")
        size = len(artefact)
    return Reconstruction(artefact=artefact, artefact_name=artefact_name(session_id),
                          telemetry_name=telemetry_name(session_id),
                          artefact_bytes=size, telemetry=telemetry)


def reconstruct(lane: Lane, opts: ReconstructOptions, *, now_ns: int, sink=None,
                spill_dir=None, stream_above: int = STREAM_ABOVE) -> Reconstruction:
    """Load every record of ``opts.session_id`` from ``lane`` and reconstruct it
    (``sink``, ``spill_dir``: as :func:`reconstruct_records`). A body over
    ``stream_above`` bytes is not loaded: it is read lean, then again as it is written.

    A body that cannot be read is passed on as its error: it is reported, not fatal,
    and the selection strips any directory from its message.
    Raises :class:`~abcd_daemon.errors.NotFoundError` when the session has no records.
    """
    loaded: list[tuple[Record, object]] = []
    for record in list_for_session(lane, opts.session_id):
        try:
            loaded.append((record, body_of(lane, record) if record.body_bytes > stream_above
                           else read_body(lane, record)))
        except (AbcdError, OSError) as exc:  # ReadRefused, RecordFormatError, EIO…
            loaded.append((record, exc))
    return reconstruct_records(lane.root_sha, loaded, opts, now_ns=now_ns,
                               empty_main=main_was_empty(lane, opts.session_id), sink=sink,
                               spill_dir=spill_dir)
