"""Building blocks for generated secrets: alphabets, seeded random strings,
checksums, and :class:`Spec`, one provider token format.

Every generator takes a ``random.Random`` and uses nothing else, so a corpus is a
pure function of its seed. Formats are written from the providers' documentation
of their own tokens (prefix, length, alphabet, checksum), never from a
secret-scanning ruleset.
"""

from __future__ import annotations

import base64
import dataclasses
import random
import string
import uuid
import zlib
from collections.abc import Callable, Sequence

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
LOWNUM = LOWER + DIGITS
UPNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
B64 = ALNUM + "+/"
URL = ALNUM + "-_"  # base64url
B32U = UPPER + "234567"
B32L = LOWER + "234567"
#: base62 in the digit-first order GitHub's checksum encoding uses.
BASE62 = DIGITS + UPPER + LOWER
#: bech32's data alphabet (age keys).
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters drawn uniformly from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def parts(rng: random.Random, spec: Sequence) -> str:
    """Concatenate ``spec``: a ``str`` is literal, ``(n, alphabet)`` is random."""
    return "".join(p if isinstance(p, str) else rand(rng, p[0], p[1]) for p in spec)


def digits(rng: random.Random, n: int) -> str:
    """``n`` decimal digits, the first non-zero."""
    return rng.choice("123456789") + rand(rng, n - 1, DIGITS)


def uid(rng: random.Random) -> str:
    """A version-4 UUID drawn from ``rng``."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def b64(data: bytes, url: bool = False, pad: bool = True) -> str:
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(data).decode()
    return out if pad else out.rstrip("=")


def rbytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def base62(n: int, width: int) -> str:
    """``n`` in base62 (digits, upper, lower), left-padded with ``0`` to ``width``."""
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = BASE62[d] + out
    return out.rjust(width, "0")


def crc_token(prefix: str, rng: random.Random, random_len: int = 30) -> str:
    """GitHub / npm style: ``prefix`` + 30 base62 + the CRC32 of those 30 as 6 base62."""
    body = rand(rng, random_len, ALNUM)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


def crc_valid(token: str, prefix: str, random_len: int = 30) -> bool:
    body = token[len(prefix):]
    return (len(body) == random_len + 6
            and base62(zlib.crc32(body[:random_len].encode()), 6) == body[random_len:])


@dataclasses.dataclass(frozen=True)
class Made:
    """One generated credential: ``value`` is what the user pastes (a token, a
    connection string, a URL); ``secret`` the secret substring of it; ``prefix`` /
    ``suffix`` the documented non-secret ends of ``secret`` (skipped by the
    survival check)."""

    value: str
    secret: str
    prefix: str = ""
    suffix: str = ""


@dataclasses.dataclass(frozen=True)
class Spec:
    """One provider token format.

    ``make(rng)`` returns a :class:`Made`. ``env`` is the variable name the
    provider's docs use for it; ``bare`` says the format is distinctive enough to
    appear with no name beside it (a documented prefix), so half its examples carry
    no secret-ish word at all; ``uses`` are provider-specific command lines
    (``{v}`` stands for the value)."""

    provider: str
    kind: str
    make: Callable[[random.Random], Made]
    env: str
    bare: bool = True
    uses: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return f"{self.provider}:{self.kind}"


def spec(provider: str, kind: str, prefix: str, body: Sequence | Callable, env: str,
         bare: bool | None = None, uses: tuple[str, ...] = ()) -> Spec:
    """A token that is ``prefix`` + ``body``; ``body`` is a :func:`parts` list or a
    callable ``rng -> str``. ``bare`` defaults to "has a prefix of 3+ characters"."""

    def make(rng: random.Random) -> Made:
        tail = body(rng) if callable(body) else parts(rng, body)
        return Made(prefix + tail, prefix + tail, prefix)

    return Spec(provider, kind, make, env, len(prefix) >= 3 if bare is None else bare, uses)


def composite(provider: str, kind: str, make: Callable[[random.Random], Made], env: str,
              bare: bool = True, uses: tuple[str, ...] = ()) -> Spec:
    """A format whose secret is part of a larger value (connection string, URL)."""
    return Spec(provider, kind, make, env, bare, uses)
