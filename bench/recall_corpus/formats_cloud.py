"""Provider formats: cloud platforms, hosting, databases, secrets and infrastructure.

Each entry is written from the provider's own documentation of the credential
(prefix, length, alphabet); where a provider documents no prefix, ``bare=False``
and the examples carry the provider's variable name, as they do in the wild.
"""

from __future__ import annotations

import json

from .tokens import (ALNUM, B32U, B64, BECH32, HEX, LOWER, LOWNUM, UPNUM, URL, Made, b64,
                     composite, digits, rand, rbytes, spec, uid)


def _azure_key(rng, n=64):  # n random bytes -> base64 (88 chars for 64)
    return b64(rbytes(rng, n))


def _az_storage(rng):
    key = _azure_key(rng)
    acct = "st" + rand(rng, 10, LOWNUM)
    return Made(f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};"
                "EndpointSuffix=core.windows.net", key)


def _az_sas(rng):
    sig = b64(rbytes(rng, 32))
    enc = sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    acct = "st" + rand(rng, 8, LOWNUM)
    return Made(f"https://{acct}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=sco"
                f"&sp=rl&se=2026-03-01T00:00:00Z&st=2025-03-01T00:00:00Z&spr=https&sig={enc}", enc)


def _az_servicebus(rng):
    key = b64(rbytes(rng, 32))
    ns = "sb-" + rand(rng, 8, LOWNUM)
    return Made(f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName="
                f"RootManageSharedAccessKey;SharedAccessKey={key}", key)


def _az_cosmos(rng):
    key = _azure_key(rng)
    return Made(f"AccountEndpoint=https://cosmos-{rand(rng, 6, LOWNUM)}.documents.azure.com:443/;"
                f"AccountKey={key};", key)


def _mongo_atlas(rng):
    pw = rand(rng, 16, ALNUM)
    host = f"cluster0.{rand(rng, 5, LOWNUM)}.mongodb.net"
    return Made(f"mongodb+srv://app_user:{pw}@{host}/prod?retryWrites=true&w=majority", pw)


def _neon_uri(rng):
    pw = "npg_" + rand(rng, 12, ALNUM)
    return Made(f"postgresql://neondb_owner:{pw}@ep-{rand(rng, 5, LOWER)}-{rand(rng, 5, LOWER)}"
                f"-a1b2c3d4.us-east-2.aws.neon.tech/neondb?sslmode=require", pw, "npg_")


def _redis_cloud(rng):
    pw = rand(rng, 32, ALNUM)
    return Made(f"redis://default:{pw}@redis-{digits(rng, 5)}.c1.us-east-1-2.ec2.redns.redis-cloud"
                f".com:{digits(rng, 5)}", pw)


def _upstash(rng):
    pw = "A" + rand(rng, 2, UPNUM) + rand(rng, 60, URL)
    return Made(f"rediss://default:{pw}@{rand(rng, 8, LOWER)}-{digits(rng, 5)}.upstash.io:6379", pw)


def _cloudinary(rng):
    secret = rand(rng, 27, URL)
    return Made(f"cloudinary://{digits(rng, 15)}:{secret}@{rand(rng, 8, LOWER)}", secret)


def _ops_token(rng):
    doc = {"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096",
           "alg": "PBES2g-HS256", "iterations": 650000, "salt": rand(rng, 22, URL)},
           "email": rand(rng, 26, LOWNUM) + "@1passwordserviceaccounts.com",
           "srpX": rand(rng, 64, HEX), "muk": {"alg": "A256GCM", "ext": True,
           "k": rand(rng, 43, URL), "key_ops": ["encrypt", "decrypt"], "kty": "oct",
           "kid": "mp"}, "secretKey": "A3-" + rand(rng, 6, UPNUM) + "-" + rand(rng, 26, UPNUM),
           "throttleSecret": {"seed": rand(rng, 64, HEX), "uuid": rand(rng, 26, UPNUM)},
           "deviceUuid": rand(rng, 26, LOWNUM)}
    tok = "ops_" + b64(json.dumps(doc, separators=(",", ":")).encode(), url=True, pad=False)
    return Made(tok, tok, "ops_eyJ")


def _bedrock(rng):
    inner = b64(("BedrockAPIKey-" + rand(rng, 4, LOWNUM) + "-at-" + digits(rng, 12) + ":"
                 + b64(rbytes(rng, 45))).encode())
    return Made("ABSK" + inner, "ABSK" + inner, "ABSKQmVkcm9ja0FQSUtleS")


def _fly_macaroon(rng):
    tok = "FlyV1 fm2_" + b64(rbytes(rng, 180))
    return Made(tok, tok, "FlyV1 fm2_")


def _eth_key(rng):
    k = "0x" + rand(rng, 64, HEX)
    return Made(k, k, "0x")


PROVIDERS = [
    # --- AWS
    spec("aws", "access_key_id", "AKIA", [(16, B32U)], "AWS_ACCESS_KEY_ID"),
    spec("aws", "temp_access_key_id", "ASIA", [(16, B32U)], "AWS_ACCESS_KEY_ID"),
    spec("aws", "secret_access_key", "", [(40, B64)], "AWS_SECRET_ACCESS_KEY"),
    spec("aws", "session_token", "IQoJb3JpZ2luX2Vj", lambda r: b64(rbytes(r, 300)).rstrip("="),
         "AWS_SESSION_TOKEN"),
    composite("aws", "bedrock_api_key", _bedrock, "AWS_BEARER_TOKEN_BEDROCK"),
    # --- Google
    spec("gcp", "api_key", "AIza", [(35, URL)], "GOOGLE_API_KEY"),
    spec("google", "oauth_client_secret", "GOCSPX-", [(28, URL)], "GOOGLE_CLIENT_SECRET"),
    spec("google", "oauth_access_token", "ya29.", lambda r: "a0" + rand(r, r.randint(150, 210), URL),
         "GOOGLE_ACCESS_TOKEN"),
    spec("google", "oauth_refresh_token", "1//0", lambda r: rand(r, 1, LOWER) + rand(r, 98, URL),
         "GOOGLE_REFRESH_TOKEN"),
    spec("firebase", "fcm_server_key", "AAAA", [(7, URL), ":APA91b", (134, URL)], "FCM_SERVER_KEY"),
    # --- Azure
    composite("azure", "storage_connection_string", _az_storage, "AZURE_STORAGE_CONNECTION_STRING"),
    composite("azure", "sas_signature", _az_sas, "AZURE_BLOB_SAS_URL"),
    composite("azure", "servicebus_connection_string", _az_servicebus, "SERVICEBUS_CONNECTION"),
    composite("azure", "cosmosdb_connection_string", _az_cosmos, "COSMOS_CONNECTION_STRING"),
    spec("azure", "ad_client_secret", "", [(3, ALNUM), "8Q~", (34, ALNUM + "_.~-")],
         "AZURE_CLIENT_SECRET", bare=False),
    spec("azure", "devops_pat", "", [(52, "abcdefghijklmnopqrstuvwxyz234567")], "AZURE_DEVOPS_EXT_PAT",
         bare=False),
    spec("azure", "openai_key", "", [(32, HEX)], "AZURE_OPENAI_API_KEY", bare=False),
    # --- other clouds and hosts
    spec("digitalocean", "pat", "dop_v1_", [(64, HEX)], "DIGITALOCEAN_ACCESS_TOKEN"),
    spec("digitalocean", "oauth", "doo_v1_", [(64, HEX)], "DIGITALOCEAN_TOKEN"),
    spec("digitalocean", "refresh", "dor_v1_", [(64, HEX)], "DO_REFRESH_TOKEN"),
    spec("heroku", "api_key", "", lambda r: uid(r), "HEROKU_API_KEY", bare=False),
    spec("heroku", "platform_key", "HRKU-AA", [(58, URL)], "HEROKU_API_KEY"),
    spec("flyio", "org_token", "fo1_", [(43, URL)], "FLY_API_TOKEN"),
    composite("flyio", "macaroon", _fly_macaroon, "FLY_API_TOKEN"),
    spec("vercel", "token", "", [(24, ALNUM)], "VERCEL_TOKEN", bare=False),
    spec("netlify", "pat", "nfp_", [(36, ALNUM)], "NETLIFY_AUTH_TOKEN"),
    spec("cloudflare", "api_token", "", [(40, URL)], "CLOUDFLARE_API_TOKEN", bare=False),
    spec("cloudflare", "global_api_key", "", [(37, HEX)], "CLOUDFLARE_API_KEY", bare=False),
    spec("cloudflare", "origin_ca_key", "v1.0-", [(24, HEX), "-", (146, HEX)], "CF_ORIGIN_CA_KEY"),
    spec("alibaba", "access_key_id", "LTAI", [(20, ALNUM)], "ALIBABA_CLOUD_ACCESS_KEY_ID"),
    spec("alibaba", "access_key_secret", "", [(30, ALNUM)], "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
         bare=False),
    spec("tencent", "secret_id", "AKID", [(32, ALNUM)], "TENCENTCLOUD_SECRET_ID"),
    spec("ibm", "cloud_api_key", "", [(44, URL)], "IBMCLOUD_API_KEY", bare=False),
    spec("linode", "token", "", [(64, HEX)], "LINODE_TOKEN", bare=False),
    spec("vultr", "api_key", "", [(36, UPNUM)], "VULTR_API_KEY", bare=False),
    spec("hetzner", "cloud_token", "", [(64, ALNUM)], "HCLOUD_TOKEN", bare=False),
    spec("scaleway", "secret_key", "", lambda r: uid(r), "SCW_SECRET_KEY", bare=False),
    spec("render", "api_key", "rnd_", [(32, ALNUM)], "RENDER_API_KEY"),
    spec("railway", "token", "", lambda r: uid(r), "RAILWAY_TOKEN", bare=False),
    spec("openshift", "oauth_token", "sha256~", [(43, URL)], "OPENSHIFT_TOKEN"),
    spec("yandex", "cloud_api_key", "AQVN", [(36, URL)], "YC_API_KEY"),
    spec("akamai", "client_secret", "", lambda r: b64(rbytes(r, 33)), "AKAMAI_CLIENT_SECRET", bare=False),
    spec("fastly", "api_token", "", [(32, URL)], "FASTLY_API_TOKEN", bare=False),
    spec("deno", "deploy_token", "ddp_", [(36, ALNUM)], "DENO_DEPLOY_TOKEN"),
    spec("scalingo", "api_token", "tk-us-", [(48, URL)], "SCALINGO_API_TOKEN"),
    # --- databases and data
    spec("planetscale", "service_token", "pscale_tkn_", [(43, URL)], "PLANETSCALE_SERVICE_TOKEN"),
    spec("planetscale", "password", "pscale_pw_", [(43, URL)], "DATABASE_PASSWORD"),
    spec("planetscale", "oauth_token", "pscale_oauth_", [(43, URL)], "PLANETSCALE_OAUTH_TOKEN"),
    composite("mongodb", "atlas_uri_password", _mongo_atlas, "MONGODB_URI"),
    spec("mongodb", "atlas_api_private_key", "", lambda r: uid(r), "MONGODB_ATLAS_PRIVATE_KEY",
         bare=False),
    spec("supabase", "access_token", "sbp_", [(40, HEX)], "SUPABASE_ACCESS_TOKEN"),
    spec("supabase", "secret_key", "sb_secret_", [(31, URL)], "SUPABASE_SECRET_KEY"),
    composite("neon", "database_password", _neon_uri, "DATABASE_URL"),
    spec("neon", "api_key", "napi_", [(64, LOWNUM)], "NEON_API_KEY"),
    composite("redis", "cloud_url_password", _redis_cloud, "REDIS_URL"),
    composite("upstash", "redis_url_password", _upstash, "UPSTASH_REDIS_URL"),
    spec("fauna", "secret", "fnA", [(37, URL)], "FAUNA_SECRET"),
    spec("databricks", "pat", "dapi", [(32, HEX)], "DATABRICKS_TOKEN"),
    spec("snowflake", "password", "", [(20, ALNUM + "!#%*")], "SNOWFLAKE_PASSWORD", bare=False),
    spec("influxdb", "token", "", lambda r: b64(rbytes(r, 64), url=True), "INFLUX_TOKEN", bare=False),
    spec("elastic", "cloud_api_key", "", lambda r: b64((rand(r, 20, URL) + ":" + rand(r, 22, URL)).encode()),
         "ELASTIC_API_KEY", bare=False),
    spec("algolia", "admin_key", "", [(32, HEX)], "ALGOLIA_ADMIN_API_KEY", bare=False),
    spec("xata", "api_key", "xau_", [(32, ALNUM)], "XATA_API_KEY"),
    composite("cloudinary", "url_secret", _cloudinary, "CLOUDINARY_URL"),
    spec("confluent", "api_secret", "", [(64, B64)], "CONFLUENT_CLOUD_API_SECRET", bare=False),
    # --- secrets managers and infrastructure
    spec("vault", "service_token", "hvs.", [(90, URL)], "VAULT_TOKEN"),
    spec("vault", "batch_token", "hvb.", [(138, URL)], "VAULT_TOKEN"),
    spec("terraform", "cloud_token", "", [(14, ALNUM), ".atlasv1.", (67, ALNUM)], "TF_TOKEN_app_terraform_io"),
    spec("doppler", "service_token", "dp.st.", [(4, LOWER), ".", (40, ALNUM)], "DOPPLER_TOKEN"),
    spec("doppler", "personal_token", "dp.pt.", [(43, ALNUM)], "DOPPLER_TOKEN"),
    composite("1password", "service_account_token", _ops_token, "OP_SERVICE_ACCOUNT_TOKEN"),
    spec("pulumi", "access_token", "pul-", [(40, HEX)], "PULUMI_ACCESS_TOKEN"),
    spec("age", "secret_key", "AGE-SECRET-KEY-1", [(58, BECH32)], "SOPS_AGE_KEY"),
    spec("consul", "acl_token", "", lambda r: uid(r), "CONSUL_HTTP_TOKEN", bare=False),
    spec("tailscale", "auth_key", "tskey-auth-", [(12, ALNUM), "-", (32, ALNUM)], "TS_AUTHKEY"),
    spec("tailscale", "api_key", "tskey-api-", [(12, ALNUM), "-", (32, ALNUM)], "TAILSCALE_API_KEY"),
    spec("ngrok", "authtoken", "", [(1, "123"), (26, ALNUM), "_", (21, ALNUM)], "NGROK_AUTHTOKEN",
         bare=False),
    spec("bitwarden", "access_token", "0.", lambda r: uid(r) + "." + rand(r, 30, ALNUM) + ":"
         + b64(rbytes(r, 16)), "BWS_ACCESS_TOKEN"),
    composite("ethereum", "private_key", _eth_key, "PRIVATE_KEY", bare=False),
    spec("dynatrace", "api_token", "dt0c01.", [(24, UPNUM), ".", (64, UPNUM)], "DT_API_TOKEN"),
    spec("infura", "project_secret", "", [(32, HEX)], "INFURA_API_SECRET", bare=False),
    spec("alchemy", "api_key", "", [(32, URL)], "ALCHEMY_API_KEY", bare=False),
    spec("binance", "api_secret", "", [(64, ALNUM)], "BINANCE_API_SECRET", bare=False),
    spec("etherscan", "api_key", "", [(34, UPNUM)], "ETHERSCAN_API_KEY", bare=False),
    spec("shodan", "api_key", "", [(32, ALNUM)], "SHODAN_API_KEY", bare=False),
    spec("virustotal", "api_key", "", [(64, HEX)], "VT_API_KEY", bare=False),
    spec("meraki", "api_key", "", [(40, HEX)], "MERAKI_DASHBOARD_API_KEY", bare=False),
]
