"""Structured secrets: JWTs (short, longer than 512 bytes, base64-wrapped) and PEM
private keys (RSA, EC, OpenSSH, PKCS#8, encrypted PKCS#8, legacy encrypted RSA,
and a Google service-account key file whose PEM sits JSON-escaped in the file).

PEM bodies are random bytes behind the real DER / openssh-key-v1 leading bytes,
base64-wrapped at the real line widths (64; 70 for OpenSSH). A JWT's documented
non-secret prefix is its header (and the ``.``); a PEM block's are its BEGIN and
END lines.
"""

from __future__ import annotations

import json
import random

from .example import Example
from .tokens import ALNUM, HEX, HEXU, LOWER, b64, digits, rand, rbytes


def _seg(obj) -> str:
    return b64(json.dumps(obj, separators=(",", ":")).encode(), url=True, pad=False)


def jwt(rng: random.Random, long: bool = False) -> tuple[str, str]:
    """A JWT and its header prefix (``header.``). ``long`` makes it > 512 bytes."""
    if long:
        header = {"alg": "RS256", "typ": "JWT", "kid": rand(rng, 27, ALNUM)}
        claims = {"iss": "https://login.acme.test/", "sub": "auth0|" + rand(rng, 24, HEX),
                  "aud": ["https://api.acme.test", "https://acme.eu.auth0.com/userinfo"],
                  "iat": 1767225600 + rng.randint(0, 10**6), "exp": 1767312000 + rng.randint(0, 10**6),
                  "azp": rand(rng, 32, ALNUM), "scope": "openid profile email offline_access",
                  "permissions": [f"{verb}:{res}" for verb in ("read", "write") for res in
                                  ("orders", "invoices", "customers", "reports")]}
        sig = b64(rbytes(rng, 256), url=True, pad=False)
    else:
        header = {"alg": "HS256", "typ": "JWT"}
        claims = {"sub": digits(rng, 8), "name": rng.choice(("svc-build", "ci", "reporting")),
                  "iat": 1767225600 + rng.randint(0, 10**6)}
        sig = b64(rbytes(rng, 32), url=True, pad=False)
    head = _seg(header) + "."
    return head + _seg(claims) + "." + sig, head


def _jwt_example(rng: random.Random, family: str, long: bool) -> Example:
    tok, head = jwt(rng, long)
    text = rng.choice((f"Authorization: Bearer {tok}", f'{{"id_token": "{tok}", "token_type": "Bearer"}}',
                       f"{tok}", f"access_token={tok}&expires_in=3600",
                       f'curl -b "session={tok}" https://app.acme.test/api/me'))
    return Example(family, False, tok, text, prefix=head, env_line=f"ACCESS_TOKEN={tok}")


def _jwt_b64(rng: random.Random) -> Example:
    tok, head = jwt(rng, rng.random() < 0.5)
    wrapped = b64(tok.encode())
    prefix = b64(tok[:len(head) // 3 * 3].encode())  # the base64 of the header, to a 3-byte boundary
    text = rng.choice((f"apiVersion: v1\nkind: Secret\ndata:\n  token: {wrapped}",
                       f'{{"kind": "Secret", "data": {{"token": "{wrapped}"}}}}', wrapped))
    return Example("generic:jwt_base64", False, wrapped, text, prefix=prefix,
                   env_line=f"SA_TOKEN_B64={wrapped}")


def _wrap(body: str, width: int) -> str:
    return "\n".join(body[i:i + width] for i in range(0, len(body), width))


_DER = {  # label -> (leading bytes, random length)
    "RSA PRIVATE KEY": (bytes.fromhex("308204a40201000282010100"), 1180),
    "EC PRIVATE KEY": (bytes.fromhex("30770201010420"), 114),
    "PRIVATE KEY": (bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8"), 1192),
    "ENCRYPTED PRIVATE KEY": (bytes.fromhex("308205243056"), 1310),
}
_OPENSSH = (b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01"
            b"\x00\x00\x003\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 ")


def pem(rng: random.Random, label: str) -> tuple[str, str, str]:
    """A PEM block for ``label`` (or ``OPENSSH PRIVATE KEY``, or ``LEGACY`` for an
    encrypted traditional RSA key): ``(block, prefix, suffix)``."""
    if label == "OPENSSH PRIVATE KEY":
        body, width, head = b64(_OPENSSH + rbytes(rng, 360)), 70, ""
    elif label == "LEGACY":
        label = "RSA PRIVATE KEY"
        body, width = b64(rbytes(rng, 1192)), 64
        head = f"Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{rand(rng, 32, HEXU)}\n\n"
    else:
        lead, n = _DER[label]
        body, width, head = b64(lead + rbytes(rng, n)), 64, ""
    prefix = f"-----BEGIN {label}-----\n{head}"
    suffix = f"\n-----END {label}-----"
    return prefix + _wrap(body, width) + suffix, prefix, suffix


_PEM_FAMILIES = {"pem_rsa": "RSA PRIVATE KEY", "pem_ec": "EC PRIVATE KEY", "pem_openssh":
                 "OPENSSH PRIVATE KEY", "pem_pkcs8": "PRIVATE KEY", "pem_pkcs8_encrypted":
                 "ENCRYPTED PRIVATE KEY", "pem_rsa_encrypted_legacy": "LEGACY"}


def _service_account(rng: random.Random) -> Example:
    block, prefix, suffix = pem(rng, "PRIVATE KEY")
    esc = json.dumps(block + "\n")[1:-1]  # the key as the JSON file holds it
    doc = (f'{{\n  "type": "service_account",\n  "project_id": "acme-{rand(rng, 6, LOWER)}",\n'
           f'  "private_key_id": "{rand(rng, 40, HEX)}",\n  "private_key": "{esc}",\n'
           f'  "client_email": "deployer@acme.iam.gserviceaccount.com",\n  "client_id": "{digits(rng, 21)}"\n}}')
    return Example("gcp:service_account_key", True, esc, doc, prefix=json.dumps(prefix)[1:-1],
                   suffix=json.dumps(suffix + "\n")[1:-1])


def examples(rng: random.Random, per_family: int) -> list[Example]:
    out: list[Example] = []
    for _ in range(per_family):
        out.append(_jwt_example(rng, "generic:jwt_short", False))
        out.append(_jwt_example(rng, "generic:jwt_long", True))
        out.append(_jwt_b64(rng))
        for fam, label in _PEM_FAMILIES.items():
            block, prefix, suffix = pem(rng, label)
            text = block + rng.choice(("", "\n"))
            out.append(Example(f"generic:{fam}", False, block, text, prefix=prefix, suffix=suffix))
        out.append(_service_account(rng))
    return out

