"""The staging sidecar ``<stamp>-<key>.stage.json`` and the quarantine reason file.

Pure encode/decode. A sidecar is validated exactly as capture validates metadata, so
a lineage the store would refuse never sits in the queue looking drainable. A sidecar
that does not decode, has another schema, or fails validation raises
:class:`SidecarError` — the entry is then never drained (seed 003: falling back to the
filename would read a sub-agent's key as a session id).
"""

from __future__ import annotations

import msgspec

from ..errors import AbcdError
from ..store.meta import CaptureMeta, Lineage
from ..store.record import format_rfc3339_ns, parse_rfc3339_ns

SIDECAR_SCHEMA = 1
REASON_SCHEMA = 1
RAW_SUFFIX = ".raw"
SIDECAR_SUFFIX = ".stage.json"
REASON_SUFFIX = ".quarantine.json"
STAMP_LEN = 26  # YYYYMMDDTHHMMSS.nnnnnnnnnZ


class SidecarError(AbcdError):
    """A sidecar is present but unusable; its entry is reported, never drained."""


class StageSidecar(Lineage, kw_only=True, omit_defaults=True):
    """The ``.stage.json`` format (reference §1.4): schema, stage time, every
    :class:`~abcd_daemon.store.meta.CaptureMeta` field (its :class:`Lineage` inherited),
    and where the bytes came from."""

    schema: int
    session_id: str
    staged_at: str
    source_kind: str = "native"
    source_tool: str = ""
    source_path: str = ""
    #: The checkout the transcript came from, when known: the drain probes that
    #: repository's git identity so repo-local names and e-mails are redacted too.
    repo_root: str = ""
    #: Set when intake staged a transcript whose last line never became complete JSON.
    unsettled: bool = False

    def meta(self) -> CaptureMeta:
        """The lineage this sidecar carries (its fields named as CaptureMeta's)."""
        return CaptureMeta(**{f: getattr(self, f) for f in CaptureMeta.__struct_fields__})

    @property
    def staged_ns(self) -> int:
        return parse_rfc3339_ns(self.staged_at)


class QuarantineReason(msgspec.Struct, kw_only=True, omit_defaults=True):
    schema: int
    session_id: str
    reason: str
    quarantined_at: str
    staged_at: str = ""
    agent_id: str = ""


def make_sidecar(meta: CaptureMeta, *, staged_ns: int, source_path: str = "",
                 repo_root: str = "", unsettled: bool = False) -> StageSidecar:
    return StageSidecar(
        schema=SIDECAR_SCHEMA,
        staged_at=format_rfc3339_ns(staged_ns),
        source_path=source_path,
        repo_root=repo_root,
        unsettled=unsettled,
        **msgspec.structs.asdict(meta),
    )


def encode_json(value) -> bytes:
    return msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n"


def decode_sidecar(data: bytes) -> StageSidecar:
    """Decode and validate a sidecar. Raises :class:`SidecarError` saying what is wrong."""
    try:
        sidecar = msgspec.json.decode(data, type=StageSidecar)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SidecarError(f"staging sidecar does not parse ({exc})") from None
    except RecursionError:
        raise SidecarError("staging sidecar nests deeper than any sidecar abcd writes") from None
    if sidecar.schema != SIDECAR_SCHEMA:
        raise SidecarError(
            f"staging sidecar has schema {sidecar.schema}, this abcd reads {SIDECAR_SCHEMA}",
            hint="a newer abcd wrote it; upgrade before draining it",
        )
    for text in (sidecar.source_path, sidecar.repo_root):
        if "\n" in text or "\r" in text:
            raise SidecarError("staging sidecar path carries a line break")
    try:
        sidecar.staged_ns
        sidecar.meta().validate()
    except (AbcdError, ValueError) as exc:
        raise SidecarError(f"staging sidecar is invalid ({exc})") from None
    return sidecar


def decode_reason(data: bytes) -> QuarantineReason:
    try:
        return msgspec.json.decode(data, type=QuarantineReason)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SidecarError(f"quarantine reason does not parse ({exc})") from None
    except RecursionError:
        raise SidecarError("quarantine reason nests deeper than any abcd writes") from None


def stem_of(raw_name: str) -> str:
    return raw_name[: -len(RAW_SUFFIX)]


def legacy_session_id(raw_name: str) -> str:
    """The session id of a sidecar-less ``<stamp>-<session>.raw`` (older binaries)."""
    stem = stem_of(raw_name)
    return stem[STAMP_LEN + 1 :] if len(stem) > STAMP_LEN + 1 and stem[STAMP_LEN] == "-" else ""
