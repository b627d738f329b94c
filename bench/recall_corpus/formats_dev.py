"""Provider formats: source hosting and CI, package registries, AI APIs, observability.

Written from each provider's documentation of its own credential format. GitHub's
``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` and npm's ``npm_`` tokens carry the
documented CRC32 checksum (30 random base62 characters, then their CRC32 as six
base62 digits).
"""

from __future__ import annotations

import json

from .tokens import (ALNUM, B64, HEX, LOWER, LOWNUM, UPNUM, UPPER, URL, Made, b64, composite,
                     crc_token, digits, rand, rbytes, spec, uid)


def _crc(prefix):
    return lambda rng: crc_token(prefix, rng)[len(prefix):]


def _pypi(rng):
    """The rest of a macaroon after its location field, base64url without padding."""
    return b64(rbytes(rng, 150), url=True, pad=False)


def _sentry_org(rng):
    claims = {"iat": 1700000000 + rng.randint(0, 10**7), "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": rand(rng, 8, LOWER)}
    return b64(json.dumps(claims, separators=(",", ":")).encode(), pad=False) + "_" + rand(rng, 43, B64)


def _sentry_dsn(rng):
    key = rand(rng, 32, HEX)
    return Made(f"https://{key}@o{digits(rng, 6)}.ingest.sentry.io/{digits(rng, 7)}", key)


def _grafana_cloud(rng):
    claims = {"o": digits(rng, 6), "n": "stack-" + digits(rng, 6) + "-hm-read-" + rand(rng, 6, LOWER),
              "k": rand(rng, 24, ALNUM), "m": {"r": "prod-us-east-0"}}
    return b64(json.dumps(claims, separators=(",", ":")).encode(), pad=False)


def _openai_legacy(rng):
    return rand(rng, 20, ALNUM) + "T3BlbkFJ" + rand(rng, 20, ALNUM)


def _openai_proj(rng):
    return rand(rng, 74, URL) + "T3BlbkFJ" + rand(rng, 74, URL)


PROVIDERS = [
    # --- GitHub (checksummed)
    spec("github", "pat_classic", "ghp_", _crc("ghp_"), "GITHUB_TOKEN",
         uses=("echo {v} | gh auth login --with-token",
               "git clone https://x-access-token:{v}@github.com/acme/api.git")),
    spec("github", "oauth", "gho_", _crc("gho_"), "GH_TOKEN"),
    spec("github", "user_to_server", "ghu_", _crc("ghu_"), "GITHUB_TOKEN"),
    spec("github", "server_to_server", "ghs_", _crc("ghs_"), "GITHUB_TOKEN",
         uses=("git push https://x-access-token:{v}@github.com/acme/site.git HEAD:main",)),
    spec("github", "refresh", "ghr_", _crc("ghr_"), "GITHUB_REFRESH_TOKEN"),
    spec("github", "fine_grained_pat", "github_pat_", [(22, ALNUM), "_", (59, ALNUM)], "GITHUB_TOKEN"),
    # --- GitLab (documented token prefixes)
    spec("gitlab", "pat", "glpat-", [(20, URL)], "GITLAB_TOKEN",
         uses=("git clone https://oauth2:{v}@gitlab.com/acme/infra.git",
               'curl --header "PRIVATE-TOKEN: {v}" https://gitlab.com/api/v4/projects')),
    spec("gitlab", "deploy_token", "gldt-", [(20, URL)], "CI_DEPLOY_PASSWORD"),
    spec("gitlab", "runner_token", "glrt-", [(20, URL)], "RUNNER_TOKEN"),
    spec("gitlab", "runner_registration", "GR1348941", [(20, URL)], "REGISTRATION_TOKEN"),
    spec("gitlab", "pipeline_trigger", "glptt-", [(40, HEX)], "TRIGGER_TOKEN"),
    spec("gitlab", "feed_token", "glft-", [(20, URL)], "GITLAB_FEED_TOKEN"),
    spec("gitlab", "oauth_app_secret", "gloas-", [(64, HEX)], "GITLAB_OAUTH_SECRET"),
    spec("gitlab", "agent_token", "glagent-", [(50, URL)], "GITLAB_AGENT_TOKEN"),
    # --- other forges and CI
    spec("bitbucket", "app_password", "ATBB", [(32, ALNUM)], "BITBUCKET_APP_PASSWORD"),
    spec("circleci", "personal_token", "CCIPAT_", [(22, ALNUM), "_", (40, HEX)], "CIRCLECI_TOKEN"),
    spec("travis", "api_token", "", [(22, URL)], "TRAVIS_API_TOKEN", bare=False),
    spec("buildkite", "api_token", "bkua_", [(40, HEX)], "BUILDKITE_API_TOKEN"),
    spec("drone", "token", "", [(32, ALNUM)], "DRONE_TOKEN", bare=False),
    spec("jenkins", "api_token", "11", [(32, HEX)], "JENKINS_API_TOKEN", bare=False),
    spec("sourcegraph", "access_token", "sgp_", [(16, HEX), "_", (40, HEX)], "SRC_ACCESS_TOKEN"),
    spec("gitea", "token", "", [(40, HEX)], "GITEA_TOKEN", bare=False),
    spec("codecov", "upload_token", "", lambda r: uid(r), "CODECOV_TOKEN", bare=False),
    spec("sonarqube", "user_token", "squ_", [(40, HEX)], "SONAR_TOKEN"),
    spec("snyk", "api_token", "", lambda r: uid(r), "SNYK_TOKEN", bare=False),
    spec("harness", "pat", "pat.", [(22, URL), ".", (24, HEX), ".", (20, ALNUM)], "HARNESS_API_KEY"),
    spec("octopus", "api_key", "API-", [(26, UPNUM)], "OCTOPUS_API_KEY"),
    spec("prefect", "api_key", "pnu_", [(36, ALNUM)], "PREFECT_API_KEY"),
    # --- package registries
    spec("npm", "access_token", "npm_", _crc("npm_"), "NPM_TOKEN",
         uses=("//registry.npmjs.org/:_authToken={v}",)),
    spec("pypi", "upload_token", "pypi-AgEIcHlwaS5vcmc", _pypi, "PYPI_TOKEN",
         uses=("twine upload -u __token__ -p {v} dist/*",)),
    spec("pypi", "test_upload_token", "pypi-AgENdGVzdC5weXBpLm9yZw", _pypi,
         "TEST_PYPI_TOKEN"),
    spec("rubygems", "api_key", "rubygems_", [(48, HEX)], "GEM_HOST_API_KEY"),
    spec("nuget", "api_key", "oy2", [(43, LOWNUM)], "NUGET_API_KEY"),
    spec("dockerhub", "pat", "dckr_pat_", [(27, URL)], "DOCKERHUB_TOKEN",
         uses=("echo {v} | docker login -u acmebot --password-stdin",)),
    spec("dockerhub", "org_token", "dckr_oat_", [(32, URL)], "DOCKER_ORG_TOKEN"),
    spec("jfrog", "api_key", "AKCp8", [(68, ALNUM)], "JFROG_API_KEY"),
    spec("jfrog", "identity_token", "cmVmdGtuOjAxOj",
         lambda r: b64(("reftkn:01:" + digits(r, 10) + ":" + rand(r, 27, ALNUM)).encode(),
                       pad=False)[14:], "JFROG_ACCESS_TOKEN"),
    spec("artifactory", "access_token", "", [(64, ALNUM)], "ARTIFACTORY_TOKEN", bare=False),
    spec("cratesio", "api_token", "cio", [(32, ALNUM)], "CARGO_REGISTRY_TOKEN"),
    spec("clojars", "deploy_token", "CLOJARS_", [(60, HEX)], "CLOJARS_PASSWORD"),
    # --- AI
    spec("openai", "project_key", "sk-proj-", _openai_proj, "OPENAI_API_KEY"),
    spec("openai", "service_account_key", "sk-svcacct-", _openai_proj, "OPENAI_API_KEY"),
    spec("openai", "legacy_key", "sk-", _openai_legacy, "OPENAI_API_KEY"),
    spec("anthropic", "api_key", "sk-ant-api03-", [(93, URL), "AA"], "ANTHROPIC_API_KEY"),
    spec("anthropic", "admin_key", "sk-ant-admin01-", [(93, URL), "AA"], "ANTHROPIC_ADMIN_KEY"),
    spec("huggingface", "user_token", "hf_", [(34, UPPER + LOWER)], "HF_TOKEN",
         uses=("huggingface-cli login --token {v}",)),
    spec("huggingface", "org_token", "api_org_", [(34, UPPER + LOWER)], "HUGGINGFACE_API_TOKEN"),
    spec("cohere", "api_key", "", [(40, ALNUM)], "COHERE_API_KEY", bare=False),
    spec("replicate", "api_token", "r8_", [(37, ALNUM)], "REPLICATE_API_TOKEN"),
    spec("groq", "api_key", "gsk_", [(52, ALNUM)], "GROQ_API_KEY"),
    spec("perplexity", "api_key", "pplx-", [(48, HEX)], "PERPLEXITY_API_KEY"),
    spec("mistral", "api_key", "", [(32, ALNUM)], "MISTRAL_API_KEY", bare=False),
    spec("together", "api_key", "", [(64, HEX)], "TOGETHER_API_KEY", bare=False),
    spec("deepseek", "api_key", "sk-", [(32, HEX)], "DEEPSEEK_API_KEY", bare=False),
    spec("xai", "api_key", "xai-", [(80, ALNUM)], "XAI_API_KEY"),
    spec("elevenlabs", "api_key", "sk_", [(48, HEX)], "ELEVENLABS_API_KEY", bare=False),
    spec("assemblyai", "api_key", "", [(32, HEX)], "ASSEMBLYAI_API_KEY", bare=False),
    spec("deepgram", "api_key", "", [(40, HEX)], "DEEPGRAM_API_KEY", bare=False),
    spec("langsmith", "api_key", "lsv2_pt_", [(32, HEX), "_", (10, HEX)], "LANGSMITH_API_KEY"),
    spec("pinecone", "api_key", "pcsk_", [(5, ALNUM), "_", (63, ALNUM)], "PINECONE_API_KEY"),
    spec("wandb", "api_key", "", [(40, HEX)], "WANDB_API_KEY", bare=False),
    spec("openrouter", "api_key", "sk-or-v1-", [(64, HEX)], "OPENROUTER_API_KEY"),
    spec("fireworks", "api_key", "fw_", [(24, ALNUM)], "FIREWORKS_API_KEY"),
    spec("modal", "token_secret", "as-", [(22, ALNUM)], "MODAL_TOKEN_SECRET"),
    spec("tavily", "api_key", "tvly-", [(32, ALNUM)], "TAVILY_API_KEY"),
    spec("cerebras", "api_key", "csk-", [(48, LOWNUM)], "CEREBRAS_API_KEY"),
    spec("stability", "api_key", "sk-", [(48, ALNUM)], "STABILITY_API_KEY", bare=False),
    # --- observability
    spec("datadog", "api_key", "", [(32, HEX)], "DD_API_KEY", bare=False),
    spec("datadog", "app_key", "", [(40, HEX)], "DD_APP_KEY", bare=False),
    spec("newrelic", "user_key", "NRAK-", [(27, UPNUM)], "NEW_RELIC_API_KEY"),
    spec("newrelic", "insert_key", "NRII-", [(32, URL)], "NEW_RELIC_INSERT_KEY"),
    spec("newrelic", "license_key", "", [(36, HEX), "NRAL"], "NEW_RELIC_LICENSE_KEY", bare=False),
    spec("sentry", "user_token", "sntryu_", [(64, HEX)], "SENTRY_AUTH_TOKEN"),
    spec("sentry", "org_token", "sntrys_eyJ", lambda r: _sentry_org(r)[3:], "SENTRY_AUTH_TOKEN"),
    composite("sentry", "dsn_key", _sentry_dsn, "SENTRY_DSN"),
    spec("grafana", "cloud_token", "glc_eyJ", lambda r: _grafana_cloud(r)[3:], "GRAFANA_CLOUD_TOKEN"),
    spec("grafana", "service_account", "glsa_", [(32, ALNUM), "_", (8, HEX)], "GRAFANA_TOKEN"),
    spec("honeycomb", "api_key", "", [(22, ALNUM)], "HONEYCOMB_API_KEY", bare=False),
    spec("pagerduty", "api_token", "", [(20, URL)], "PAGERDUTY_TOKEN", bare=False),
    spec("splunk", "hec_token", "", lambda r: uid(r), "SPLUNK_HEC_TOKEN", bare=False),
    spec("opsgenie", "api_key", "", lambda r: uid(r), "OPSGENIE_API_KEY", bare=False),
    spec("rollbar", "access_token", "", [(32, HEX)], "ROLLBAR_ACCESS_TOKEN", bare=False),
    spec("bugsnag", "api_key", "", [(32, HEX)], "BUGSNAG_API_KEY", bare=False),
    spec("launchdarkly", "sdk_key", "sdk-", lambda r: uid(r), "LAUNCHDARKLY_SDK_KEY"),
    spec("posthog", "personal_api_key", "phx_", [(43, ALNUM)], "POSTHOG_PERSONAL_API_KEY"),
    spec("mixpanel", "api_secret", "", [(32, HEX)], "MIXPANEL_API_SECRET", bare=False),
    spec("segment", "write_key", "", [(32, ALNUM)], "SEGMENT_WRITE_KEY", bare=False),
    spec("axiom", "api_token", "xaat-", lambda r: uid(r), "AXIOM_TOKEN"),
]
