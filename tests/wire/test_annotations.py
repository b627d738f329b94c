"""Every type a reply can carry — the wire messages, the core Structs they hold, and the
telemetry a served reconstruction decodes — declares its fields with evaluated
annotations (no ``from __future__ import annotations`` in their modules): msgspec
compiles each string annotation every time a process builds a decoder for the type,
which a CLI call pays on every request (``abcd_client.connect``). A string is allowed
only where a type names itself (a recursive field)."""

from __future__ import annotations

import typing

import msgspec

from abcd_daemon.reconstruct.schema import Reconstruction, Telemetry
from abcd_daemon.wire import messages as m


def _structs(roots) -> set[type]:
    """The Struct types reachable from ``roots`` through their fields' annotations."""
    seen: set[type] = set()
    todo = list(roots)
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            if tp in seen:
                continue
            seen.add(tp)
            for cls in tp.__mro__:
                todo += [a for a in vars(cls).get("__annotations__", {}).values() if not isinstance(a, str)]
        else:
            todo += list(typing.get_args(tp))
    return seen


def test_the_types_a_reply_carries_have_evaluated_annotations_so_decoding_compiles_none():
    structs = _structs([*m.Message.__args__, Telemetry, Reconstruction])
    assert len(structs) > 40  # the walk reached the core's Structs, not only the messages
    strings = {}
    for tp in structs:
        for cls in tp.__mro__:
            for field, annotation in vars(cls).get("__annotations__", {}).items():
                if isinstance(annotation, str) and tp.__name__ not in annotation:
                    strings[f"{cls.__module__}.{cls.__name__}.{field}"] = annotation
    assert strings == {}
