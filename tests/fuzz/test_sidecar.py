"""Fuzzing the staging sidecar parser (abcd_daemon/queue/sidecar.py decode_sidecar).

Contract: any bytes decode to a valid :class:`StageSidecar` or raise
:class:`SidecarError` — nothing else. That matters beyond tidiness: ``describe`` lists
the queue by catching ``AbcdError`` only, so anything else a sidecar raises escapes
the drain's planning step (``Daemon._plan``) and the listing verbs.

Properties: arbitrary bytes; JSON objects carrying every sidecar key with arbitrary
JSON values (ints past int64, wrong types, line breaks in paths, bad ids, vocabularies
violated); whatever is accepted is a lineage the store would accept and re-encodes to
itself; and every valid lineage staging can write decodes back unchanged.
"""

from __future__ import annotations

from hypothesis import strategies as st

from abcd_daemon.queue.sidecar import (SidecarError, StageSidecar, decode_sidecar, encode_json,
                                       make_sidecar)
from abcd_daemon.store.meta import ATTRIBUTIONS, LINEAGE_SOURCES, CaptureMeta
from abcd_daemon.store.record import format_rfc3339_ns

from .fuzzing import bomb_depths, dumps, fuzz, json_text, json_values, nesting_bomb, rfc3339_shaped

KEYS = list(StageSidecar.__struct_fields__)
ids = st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}", fullmatch=True)
#: Values chosen to sit on every side of a validation rule.
_edge_values = st.one_of(
    ids, st.sampled_from(["", ".", "..", "../x", "a/b", "a\nb", "a\rb", "x" * 129, "x" * 513,
                          *LINEAGE_SOURCES, *ATTRIBUTIONS, "native", "import", "other"]),
    st.integers(-(2**70), 2**70), st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, 2**64]),
    st.integers(0, 2**63 - 1).map(format_rfc3339_ns),
)


@st.composite
def sidecar_objects(draw):
    base = {"schema": 1, "session_id": draw(ids), "staged_at": format_rfc3339_ns(draw(
        st.integers(0, 2**63 - 1)))}
    for key in draw(st.lists(st.sampled_from(KEYS + ["unknown", "extra"]), max_size=8)):
        base[key] = draw(st.one_of(_edge_values, json_values))
    for key in draw(st.lists(st.sampled_from(list(base)), max_size=2, unique=True)):
        del base[key]
    return dumps(base).encode()


_garbage = st.one_of(st.binary(max_size=300), json_values.map(lambda v: dumps(v).encode()),
                     json_text.map(str.encode))


@fuzz(st.one_of(_garbage, sidecar_objects()), examples=800)
def test_any_bytes_decode_to_a_valid_sidecar_or_a_sidecar_error(data):
    try:
        sidecar = decode_sidecar(data)
    except SidecarError as exc:
        assert str(exc)  # says what is wrong
        return
    assert isinstance(sidecar, StageSidecar) and sidecar.schema == 1
    sidecar.meta().validate()  # a lineage the store accepts, or it would not be drainable
    assert not any(c in sidecar.source_path + sidecar.repo_root for c in "\n\r")
    assert sidecar.staged_ns == sidecar.staged_ns  # the stage time is readable
    assert decode_sidecar(encode_json(sidecar)) == sidecar


@st.composite
def valid_metas(draw):
    agent = draw(st.one_of(st.just(""), ids))
    attribution = draw(st.sampled_from(ATTRIBUTIONS)) if agent else ""
    linked = agent and attribution != "unattributed"
    free = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                   max_size=40)
    kind = draw(st.sampled_from(["native", "import"]))
    return CaptureMeta(
        session_id=draw(ids), agent_id=agent,
        parent_agent_id=draw(st.one_of(st.just(""), ids)) if linked else "",
        agent_type=draw(free), spawn_depth=draw(st.integers(0, 2**63 - 1)) if linked else 0,
        spawn_tool_use_id=draw(free) if linked else "",
        lineage_source=draw(st.sampled_from(("", *LINEAGE_SOURCES))),
        spawn_attribution=attribution, adopted_project=draw(free), source_kind=kind,
        source_tool=draw(free)), draw(st.integers(0, 2**63 - 1)), draw(free), draw(free), \
        draw(st.booleans())


@fuzz(valid_metas(), examples=400)
def test_every_lineage_staging_may_write_decodes_back_unchanged(case):
    meta, staged_ns, source_path, repo_root, unsettled = case
    meta.validate()
    sidecar = make_sidecar(meta, staged_ns=staged_ns, source_path=source_path,
                           repo_root=repo_root, unsettled=unsettled)
    back = decode_sidecar(encode_json(sidecar))
    assert back == sidecar
    assert back.meta() == meta and back.staged_ns == staged_ns


@fuzz(st.tuples(bomb_depths, st.one_of(st.sampled_from(KEYS), st.just("unknown")),
                st.sampled_from("[{")),
      examples=40)
def test_a_sidecar_nested_past_the_decoders_depth_is_a_sidecar_error(case):
    depth, key, opener = case
    data = ('{"schema":1,"session_id":"s","staged_at":"2026-01-01T00:00:00Z","%s":%s}'
            % (key, nesting_bomb(depth, opener))).encode()
    try:
        decode_sidecar(data)
    except SidecarError:
        pass


@fuzz(rfc3339_shaped, examples=300)
def test_a_staged_at_of_any_rfc3339_shape_decodes_or_is_a_sidecar_error(stamp):
    data = ('{"schema":1,"session_id":"s","staged_at":"%s"}' % stamp).encode()
    try:
        sidecar = decode_sidecar(data)
    except SidecarError:
        return
    assert sidecar.staged_at == stamp
