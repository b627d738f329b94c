"""Near-miss negatives: strings a careful human redactor would leave alone, many
of them shaped like secrets or standing next to secret-ish names.

Each family's generator returns ``(text, near_miss, env_line)``; ``near_miss`` is
the substring that must survive redaction unchanged (masking any of it counts as a
false positive).
"""

from __future__ import annotations

import hashlib
import random

from .example import Example
from .tokens import ALNUM, HEX, b64, base62, crc_valid, digits, rand, rbytes, uid

_AWS_DOC = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AKIAI44QH8DHBEXAMPLE",
            "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY")


def _aws_example(rng):
    v = rng.choice(_AWS_DOC)
    name = "aws_secret_access_key" if "/" in v else "aws_access_key_id"
    text = rng.choice((f"{name} = {v}", f"export {name.upper()}={v}", f'"{name}": "{v}"'))
    return text, v, f"{name.upper()}={v}"


_PLACEHOLDERS = ("<your-token>", "<YOUR_API_KEY>", "your_api_key_here", "changeme", "REPLACE_ME",
                 "xxxxxxxxxxxxxxxx", "****", "********", "0000000000000000000000000000000000000000",
                 "your-secret-here", "<redacted>", "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
                 "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "TODO", "placeholder", "<password>")
_REFS = ("${API_KEY}", "$TOKEN", "${{ secrets.NPM_TOKEN }}", "${DB_PASSWORD}", "%API_KEY%",
         "{{ .Values.apiKey }}", "$(cat /run/secrets/token)", "process.env.STRIPE_SECRET_KEY",
         'os.environ["OPENAI_API_KEY"]', "${GITHUB_TOKEN:?missing}")
_NAMES = ("API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "STRIPE_SECRET_KEY", "AUTH_TOKEN", "CLIENT_SECRET")


def _assign(rng, v):
    n = rng.choice(_NAMES)
    text = rng.choice((f"{n}={v}", f"export {n}={v}", f'"{n.lower()}": "{v}"', f"{n.lower()}: {v}",
                       f"--{n.lower().replace('_', '-')} {v}"))
    return text, v, f"{n}={v}"


def _placeholder(rng):
    return _assign(rng, rng.choice(_PLACEHOLDERS))


def _reference(rng):
    return _assign(rng, rng.choice(_REFS))


_BENIGN = ("password_policy=strict", "token_count=1024", "api_version: 2024-01-01", "auth: true",
           "--token-file ~/.config/acme/token", "max_tokens: 4096", "secret_name: prod-db-creds",
           "key_id: 3", "AUTH_PROVIDER=github", "password_min_length=12", '"tokenizer": "cl100k_base"',
           "api_base: https://api.openai.com/v1", "credentials_path: /etc/acme/creds.json",
           "TOKEN_TTL=3600", "SECRET_ROTATION_DAYS=90", '"auth_type": "oauth2"', "keyring_backend=file",
           "api_timeout=30s", "PASSWORD_HASHER=argon2", '"apiKeyHeader": "X-Api-Key"',
           "use_auth_token: false", "SESSION_COOKIE_SECURE=True")


def _benign(rng):
    text = rng.choice(_BENIGN)
    sep = max(text.rfind("="), text.rfind(": "), text.rfind(" "))
    value = text[sep + 1:].strip().strip('"')
    env = text if "=" in text and " " not in text else f"# {text}"
    return text, value, env


def _git_sha(rng):
    sha = rand(rng, 40, HEX)
    text = rng.choice((f"commit {sha}\nDate:   Tue Mar 3 10:12:00 2026\n\n    Fix pagination",
                       f"HEAD is now at {sha[:7]} Fix pagination",
                       f"{sha} refs/heads/main", f"Merge: {sha[:7]} {rand(rng, 7, HEX)}",
                       f"pinned to {sha} (v2.3.1)"))
    near = sha if sha in text else sha[:7]
    return text, near, f"GIT_COMMIT={near}"


def _uuid(rng):
    u = uid(rng)
    text = rng.choice((f'"request_id": "{u}"', f"Created order {u}", f"trace_id={u} status=200",
                       f"session {u} resumed", f"volume {u} attached"))
    return text, u, f"DEFAULT_TENANT_ID={u}"


_PREFIXES = ("ghp_", "sk_live_", "glpat-", "xoxb-", "AKIA", "sk-ant-api03-", "hvs.", "dop_v1_", "npm_")


def _prefix_only(rng):
    p = rng.choice(_PREFIXES)
    text = rng.choice((f"tokens of this kind start with `{p}`", f"if token.startswith(\"{p}\"):",
                       f"the prefix {p} marks the token type", f"grep -r '{p}' ."))
    return text, p, f"# {text}"


#: too short for their format, or outside its alphabet (words, dashes, ellipses)
_MALFORMED = ("ghp_1234", "glpat-abc", "sk_live_123", "xoxb-123", "hf_test", "npm_TOKEN", "AKIA1234",
              "sk-proj-...", "ghp_…", "glpat-…", "AKIA_ROTATION_POLICY", "xoxb-your-bot-token",
              "glpat-your-token-here", "dop_v1_<64 hex chars>")


def _malformed(rng):
    v = rng.choice(_MALFORMED)
    text = rng.choice((f"e.g. {v}", f"the docs show `{v}` as a sample", f"(looks like {v})"))
    return text, v, f"# {text}"


def _bad_checksum(rng):
    body = rand(rng, 30, ALNUM)
    wrong = base62(int.from_bytes(hashlib.sha256(body.encode()).digest()[:4], "big"), 6)
    tok = "ghp_" + body + wrong
    while crc_valid(tok, "ghp_"):  # vanishingly rare: make sure the checksum is wrong
        tok = tok[:-1] + ("A" if tok[-1] != "A" else "B")
    text = rng.choice((f"fixture: {tok}", f'TEST_GH_TOKEN = "{tok}"  # invalid checksum, used by tests'))
    return text, tok, f"# {text}"


_CODE = ("getApiKey()", "SECRET_KEY_NAME", "api_key = os.environ['API_KEY']", "const token = await getToken();",
         "password = request.form['password']", "def refresh_access_token(self):",
         "self.secret_key = settings.SECRET_KEY", "token: Optional[str] = None", "validatePassword(input)",
         "AuthTokenProvider.create()", "if not api_key:", "client_secret_path = Path('secret.json')")


def _code(rng):
    text = rng.choice(_CODE)
    return text, text, f"# {text}"


def _version(rng):
    v = f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 99)}"
    text = rng.choice((f'version = "{v}"', f"sdk_version={v}-beta.2", f"node v{v}", f"api_version: {v}",
                       f"TOKEN_SCHEMA_VERSION={v}"))
    return text, v, f"APP_VERSION={v}"


def _digest(rng):
    d = rand(rng, 64, HEX)
    text = rng.choice((f"Digest: sha256:{d}", f"SHA256 (acme-2.1.0.tar.gz) = {d}",
                       f"image: ghcr.io/acme/api@sha256:{d}", f"oid sha256:{d}", f"checksum: sha256:{d}"))
    return text, d, f"IMAGE_DIGEST=sha256:{d}"


def _public_key(rng):
    if rng.random() < 0.5:
        k = "AAAAC3NzaC1lZDI1NTE5AAAAI" + b64(rbytes(rng, 31))
        v = f"ssh-ed25519 {k} deploy@build-01"
    else:
        body = b64(bytes.fromhex("30820122300d06092a864886f70d01010105000382010f00") + rbytes(rng, 270))
        v = "-----BEGIN PUBLIC KEY-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
            + "\n-----END PUBLIC KEY-----"
    return v, v, f'DEPLOY_PUBLIC_KEY="{v}"' if "\n" not in v else "# public key"


def _object_id(rng):
    v = rng.choice((f"cus_{rand(rng, 14, ALNUM)}", f"pi_{digits(rng, 1)}{rand(rng, 23, ALNUM)}",
                    f"i-0{rand(rng, 16, HEX)}", f"sg-0{rand(rng, 16, HEX)}",
                    f"arn:aws:iam::{digits(rng, 12)}:role/deploy", f"msg_01{rand(rng, 22, ALNUM)}",
                    f"vpc-{rand(rng, 17, HEX)}", f"evt_{rand(rng, 24, ALNUM)}"))
    text = rng.choice((f"created {v}", f'"id": "{v}"', f"describe {v} --output json"))
    return text, v, f"RESOURCE_ID={v}"


def _data_uri(rng):
    v = "iVBORw0KGgoAAAANSUhEUgAA" + b64(rbytes(rng, 60))
    return f'<img src="data:image/png;base64,{v}">', v, f"# logo {v[:20]}"


def _url_no_password(rng):
    v = rng.choice(("postgres://app@db.internal:5432/app", "redis://redis:6379/0", "mongodb://mongo:27017/test",
                    "https://git@github.com/acme/api.git", "amqp://rabbit.internal:5672/", "mysql://localhost/shop",
                    "postgresql://localhost/dev?sslmode=disable"))
    return f"DATABASE_URL={v}" if rng.random() < 0.5 else f"connecting to {v}", v, f"DATABASE_URL={v}"


FAMILIES = {
    "aws_documented_example": _aws_example, "placeholder": _placeholder, "variable_reference": _reference,
    "benign_secret_named": _benign, "git_sha": _git_sha, "uuid": _uuid, "prefix_only": _prefix_only,
    "malformed_token": _malformed, "bad_checksum": _bad_checksum, "code_identifier": _code,
    "version_string": _version, "labelled_digest": _digest, "public_key": _public_key,
    "object_id": _object_id, "image_data_uri": _data_uri, "url_without_password": _url_no_password,
}


def examples(rng: random.Random, per_family: int) -> list[Example]:
    """``per_family`` negatives of every family (family names are ``neg:<name>``)."""
    out = []
    for name, make in FAMILIES.items():
        for _i in range(per_family):
            text, near, env_line = make(rng)
            out.append(Example(f"neg:{name}", False, near, text,
                               env_line=env_line if near in env_line else ""))
    return out
