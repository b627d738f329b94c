"""Writing the turns of a lean transcript whose blocks were rendered as they were read.

:func:`write_turns` is :meth:`~.render_turns.TurnWriter._turn` for the turns of a
:class:`~.lean_tables.TurnTable` whose lines' blocks are Markdown in a
:class:`~.render_spill.RenderSpill`: the same heading (role, compaction summary,
sidechain in the main thread, model, time), the same ``[COMPACTED]`` marker before and
marker lines after, and the turn's lines' rendered bytes copied in between, with what
the cap elided from them added to the writer's counts. It reads the table's columns
directly, building no :class:`~.model.Turn`, and labels each model once.

Pure apart from the spill's reads; appends to the writer's ``parts``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .fence import label
from .lean_tables import COMPACTED, SIDECHAIN, SUMMARY, WHEN_LEN


def write_turns(writer, table, spill, indexes: Iterable[int],
                markers: dict[int, list[str]]) -> None:
    """Write the turns ``indexes`` (0-based, in order) of ``table`` through ``writer``
    (a :class:`~.render_turns.TurnWriter`), their blocks from ``spill``."""
    from .render_turns import compaction_marker

    out, put_bytes, piece = writer.parts, writer._bytes, spill.piece
    roles, role_of, models, model_of = table.roles, table.role, table.models, table.model
    when, flags, spilled, more, odd = table.when, table.flags, table.spilled, table.more, \
        table._odd_when
    compactions, visible = writer._compactions, writer._copies_visible
    model_label: dict[int, str] = {}
    elided_blocks = elided_bytes = 0
    for i in indexes:
        n = i + 1
        role = roles[role_of[i]]
        f = flags[i]
        if f:
            if f & COMPACTED:
                out.append(compaction_marker(compactions.get(n, "")))
            if f & SUMMARY:
                role += " (compaction summary)"
            if f & SIDECHAIN and visible:
                role += " (sidechain)"
        heading = f"### Turn {n} — {role}"
        m = model_of[i]
        if m:
            text = model_label.get(m)
            if text is None:
                text = model_label[m] = f" · {label(models[m])}"
            heading += text
        at = WHEN_LEN * i
        if when[at]:
            heading += f" · {when[at:at + 19].decode('ascii')}Z"
        elif odd and odd.get(i):
            heading += f" · {odd[i][:19]}Z"
        out.append(heading + "\n\n")
        for offset in table.offsets(i) if i in more else (spilled[i],):
            data, blocks, elided = piece(offset)
            put_bytes(data)
            elided_blocks += blocks
            elided_bytes += elided
        marks = markers.get(n)
        if marks:
            out.extend(marks)
    writer.elided_blocks += elided_blocks
    writer.elided_bytes += elided_bytes
