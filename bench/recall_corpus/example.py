"""The corpus's data types: :class:`Example` (one labelled string) and :class:`Corpus`."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Example:
    """One labelled example.

    ``text`` is the plain string as it would appear in a file or a terminal, before
    any transcript placement; ``secret`` is an exact substring of ``text``: for a
    positive, the credential a redactor must remove; for a negative, the near-miss
    it must leave alone. ``provider`` is true for provider-format families.
    ``prefix`` / ``suffix`` are the documented, non-secret ends of ``secret``
    (``ghp_``, a JWT's header, a PEM's BEGIN/END lines): the survival check looks
    only at what lies between them. ``env_line`` is the example as one line of a
    ``.env`` file (``NAME=value``), used by the ``env_file`` context; empty means
    ``text`` itself is used."""

    family: str
    provider: bool
    secret: str
    text: str
    prefix: str = ""
    suffix: str = ""
    env_line: str = ""

    def __post_init__(self) -> None:
        if self.secret not in self.text:
            raise ValueError(f"{self.family}: secret is not a substring of its text")
        if not self.secret.startswith(self.prefix) or not self.secret.endswith(self.suffix):
            raise ValueError(f"{self.family}: prefix/suffix are not the secret's ends")
        if self.env_line and self.secret not in self.env_line:
            raise ValueError(f"{self.family}: secret is not in its env line")

    @property
    def body(self) -> str:
        """The distinctive part of ``secret`` (without the documented prefix/suffix)."""
        return self.secret[len(self.prefix):len(self.secret) - len(self.suffix)]

    @property
    def pem(self) -> bool:
        return "-----BEGIN " in self.secret


@dataclasses.dataclass(frozen=True)
class Corpus:
    """``positives`` (secrets) and ``negatives`` (near misses), in a seeded order."""

    positives: list[Example]
    negatives: list[Example]

    @property
    def families(self) -> list[str]:
        return sorted({e.family for e in self.positives})

    @property
    def providers(self) -> list[str]:
        return sorted({e.family.split(":", 1)[0] for e in self.positives if e.provider})
