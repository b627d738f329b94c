"""Generic families: secrets with no provider prefix, recognisable only by where
they stand — a secret-named assignment in any syntax, a connection string's
password field, an ``Authorization`` header, URL userinfo, a high-entropy value
after a secret-ish name, or plain prose. JWTs and PEM keys are in ``structured``.

Values are generated to look like what people actually use: random passwords
with punctuation, random base62 API keys, hex and base64 keys.
"""

from __future__ import annotations

import random

from . import structured
from .example import Example
from .tokens import ALNUM, HEX, LOWER, URL, b64, rand, rbytes

_PW_SYMBOLS = "!#%*-_.@+"
_WORDS = ("hunter", "falcon", "orchid", "tundra", "marble", "cobalt", "saffron", "glacier", "lantern")


def password(rng: random.Random, url_safe: bool = False) -> str:
    """A human-ish password: a word, digits, symbols and random letters (>= 12 chars)."""
    sym = "-_." if url_safe else _PW_SYMBOLS
    return (rng.choice(_WORDS) + rand(rng, 2, "0123456789") + rng.choice(sym)
            + rand(rng, rng.randint(6, 10), ALNUM) + rng.choice(sym) + rand(rng, 2, ALNUM))


def api_key(rng: random.Random) -> str:
    return rand(rng, rng.choice((24, 32, 40)), ALNUM)


_ENV_NAMES = ("DB_PASSWORD", "APP_SECRET", "SESSION_SECRET", "API_KEY", "AUTH_TOKEN", "SMTP_PASSWORD",
              "JWT_SECRET", "CLIENT_SECRET", "ADMIN_PASSWD", "SERVICE_CREDENTIAL", "MY_API_TOKEN",
              "ACCESS_KEY", "PRIVATE_TOKEN", "POSTGRES_PWD", "REDIS_AUTH", "SECRET_KEY_BASE")
_JSON_NAMES = ("password", "apiKey", "client_secret", "accessToken", "api_token", "secretKey",
               "auth_token", "privateKey", "passwd", "credentials", "x-api-key", "refreshToken")
_FLAGS = ("--password", "--api-key", "--token", "--client-secret", "--auth-token", "--secret",
          "--access-key", "--db-password")


def _value(rng: random.Random) -> str:
    return password(rng) if rng.random() < 0.5 else api_key(rng)


def _env(rng):
    n, v = rng.choice(_ENV_NAMES), _value(rng)
    return f"{n}={v}", v, f"{n}={v}"


def _export(rng):
    n, v = rng.choice(_ENV_NAMES), _value(rng)
    return f'export {n}="{v}"', v, f'{n}="{v}"'


def _json(rng):
    n, v = rng.choice(_JSON_NAMES), _value(rng)
    return f'{{"host": "db.internal", "user": "svc", "{n}": "{v}"}}', v, f"{n.upper().replace('-', '_')}={v}"


def _yaml(rng):
    n, v = rng.choice(_JSON_NAMES), _value(rng)
    return f"database:\n  host: db.internal\n  {n}: {v}\n  pool: 5", v, f"{n.upper().replace('-', '_')}={v}"


def _flag(rng):
    f, v = rng.choice(_FLAGS), _value(rng)
    tool = rng.choice(("./bin/migrate", "acme-cli login", "python manage.py seed", "deployctl push"))
    return f"{tool} {f} {v} --verbose", v, f"{f[2:].upper().replace('-', '_')}={v}"


def _dash_p(rng):
    v = password(rng)
    text = rng.choice((f"mysql -h db.internal -u app -p{v} orders", f"mysqldump -u root -p{v} --all-databases",
                       f"sshpass -p {v} ssh deploy@10.0.4.17", f"redis-cli -h cache.internal -a {v} ping",
                       f"mysql -u root -p {v}"))
    return text, v, f"MYSQL_PWD={v}"


def _odbc(rng):
    v = password(rng)
    text = (f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:sql-{rand(rng, 5, LOWER)}.database.windows"
            f".net,1433;Database=app;Uid=app_user;Pwd={v};Encrypt=yes;TrustServerCertificate=no;")
    return text, v, f'ODBC_CONNECTION="{text}"'


def _adonet(rng):
    v = password(rng)
    text = f"Server=db01.corp.local;Database=Orders;User Id=svc_orders;Password={v};TrustServerCertificate=True"
    return text, v, f'ConnectionStrings__Default="{text}"'


def _bearer(rng):
    v = rand(rng, rng.choice((32, 40, 64)), URL)
    text = f'curl -s -H "Authorization: Bearer {v}" https://api.internal.acme.test/v1/orders'
    return text, v, f"API_BEARER={v}"


def _basic(rng):
    user, pw = rand(rng, 6, LOWER), password(rng)
    v = b64(f"{user}:{pw}".encode())
    return f"Authorization: Basic {v}", v, f'AUTH_HEADER="Basic {v}"'


def _token_header(rng):
    v = rand(rng, 40, HEX)
    return f"Authorization: token {v}", v, f'AUTH_HEADER="token {v}"'


def _userinfo(scheme, host):
    def make(rng):
        v = password(rng, url_safe=True)
        url = f"{scheme}://{rand(rng, 6, LOWER)}:{v}@{host}"
        return url, v, f"CONNECTION_URL={url}"
    return make


def _hex_named(rng):
    v = rand(rng, rng.choice((32, 64)), HEX)
    n = rng.choice(("signing_key", "SECRET_KEY", "hmac_secret", "ENCRYPTION_KEY", "webhook_secret"))
    return rng.choice((f"{n} = '{v}'", f"{n}={v}", f'"{n}": "{v}"')), v, f"{n.upper()}={v}"


def _b64_named(rng):
    v = b64(rbytes(rng, 32))
    text = rng.choice((f"APP_KEY=base64:{v}", f'"client_secret": "{v}"', f"master_key: {v}"))
    return text, v, f"APP_KEY=base64:{v}"


def _prose_password(rng):
    v = password(rng)
    text = rng.choice((f"the password is {v}", f"The admin password is {v} (don't share it)",
                       f"login with admin / {v}", f"use password {v} for the staging box",
                       f"fyi my password is {v} btw"))
    return text, v, f"# {text}"


def _prose_key(rng):
    v = api_key(rng)
    text = rng.choice((f"my API key: {v}", f"here's my api key {v}, can you test it?",
                       f"The token is {v}", f"my secret is {v}"))
    return text, v, f"# {text}"


def _netrc(rng):
    v = password(rng)
    return f"machine api.acme.test login deploy-bot password {v}", v, f"NETRC_PASSWORD={v}"


def _docker_auth(rng):
    v = b64(f"ci-bot:{password(rng)}".encode())
    return f'{{"auths": {{"registry.acme.test": {{"auth": "{v}"}}}}}}', v, f"DOCKER_AUTH={v}"


def _k8s_secret(rng):
    v = b64(password(rng).encode())
    text = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: {v}"
    return text, v, f"DB_PASSWORD_B64={v}"


def _django(rng):
    v = "django-insecure-" + rand(rng, 50, LOWER + "0123456789!@#%^&*(-_=+)")
    return f"SECRET_KEY = '{v}'", v, f"DJANGO_SECRET_KEY='{v}'"


def _cookie(rng):
    v = rand(rng, 32, LOWER + "0123456789")
    return f"Cookie: sessionid={v}; csrftoken={rand(rng, 32, ALNUM)}", v, f"SESSION_COOKIE={v}"


FAMILIES = {
    "assign_env": _env, "assign_export": _export, "assign_json": _json, "assign_yaml": _yaml,
    "cli_flag": _flag, "cli_dash_p": _dash_p, "conn_odbc_pwd": _odbc, "conn_adonet_password": _adonet,
    "auth_bearer": _bearer, "auth_basic": _basic, "auth_token": _token_header,
    "url_postgres": _userinfo("postgres", "db.internal:5432/app"),
    "url_mysql": _userinfo("mysql", "mysql.internal:3306/shop"),
    "url_mongodb_srv": _userinfo("mongodb+srv", "cluster1.x7k2p.mongodb.net/app"),
    "url_redis": _userinfo("redis", "cache.internal:6379/0"),
    "url_amqp": _userinfo("amqp", "rabbit.internal:5672/%2F"),
    "url_https": _userinfo("https", "git.acme.test/team/repo.git"),
    "url_ftp": _userinfo("ftp", "files.acme.test/incoming/"),
    "hex_after_name": _hex_named, "base64_after_name": _b64_named,
    "prose_password": _prose_password, "prose_api_key": _prose_key, "netrc": _netrc,
    "docker_auth": _docker_auth, "k8s_secret_data": _k8s_secret, "django_secret_key": _django,
    "session_cookie": _cookie,
}


def examples(rng: random.Random, per_family: int) -> list[Example]:
    """``per_family`` examples of every generic family, then the structured ones."""
    out = []
    for name, make in FAMILIES.items():
        for _i in range(per_family):
            text, secret, env_line = make(rng)
            out.append(Example(f"generic:{name}", False, secret, text, env_line=env_line))
    return out + structured.examples(rng, per_family)
