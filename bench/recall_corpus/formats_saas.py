"""Provider formats: payments, messaging and e-mail, productivity and SaaS APIs.

Written from each provider's documentation of its own credential format.
"""

from __future__ import annotations

import json

from .tokens import (ALNUM, B64, HEX, HEXU, LOWNUM, UPNUM, URL, Made, b64, composite,
                     digits, rand, spec, uid)


def _slack_webhook(rng):
    url = (f"https://hooks.slack.com/services/T{rand(rng, 10, UPNUM)}/B{rand(rng, 10, UPNUM)}/"
           f"{rand(rng, 24, ALNUM)}")
    return Made(url, url, "https://hooks.slack.com/services/T")


def _discord_webhook(rng):
    url = f"https://discord.com/api/webhooks/{digits(rng, 19)}/{rand(rng, 68, URL)}"
    return Made(url, url, "https://discord.com/api/webhooks/")


def _teams_webhook(rng):
    url = (f"https://acme.webhook.office.com/webhookb2/{uid(rng)}@{uid(rng)}/IncomingWebhook/"
           f"{rand(rng, 32, HEX)}/{uid(rng)}")
    return Made(url, url, "https://acme.webhook.office.com/webhookb2/")


def _discord_bot(rng):
    user = b64(digits(rng, 18).encode(), pad=False)
    tok = f"{user}.{rand(rng, 6, URL)}.{rand(rng, 38, URL)}"
    return Made(tok, tok)


def _braintree(rng):
    tok = f"access_token$production${rand(rng, 16, LOWNUM)}${rand(rng, 32, HEX)}"
    return Made(tok, tok, "access_token$production$")


def _intercom(rng):
    raw = f"tok:{uid(rng).replace('-', '_')}:1:0"
    tok = b64(raw.encode())
    return Made(tok, tok, "dG9rO")


def _mapbox(rng):
    claims = b64(json.dumps({"u": "acme-" + rand(rng, 5, LOWNUM), "a": rand(rng, 25, LOWNUM)},
                            separators=(",", ":")).encode(), url=True, pad=False)
    tok = f"sk.{claims}.{rand(rng, 22, URL)}"
    return Made(tok, tok, "sk.eyJ1Ijoi")


def _twitter_bearer(rng):
    tok = "A" * 22 + rand(rng, 90, ALNUM) + "%3D" + rand(rng, 40, ALNUM)
    return Made(tok, tok, "A" * 22)


def _plaid_access(rng):
    tok = "access-production-" + uid(rng)
    return Made(tok, tok, "access-production-")


def _salesforce(rng):
    tok = "00D" + rand(rng, 12, ALNUM) + "!" + rand(rng, 96, ALNUM + ".")
    return Made(tok, tok, "00D")


PROVIDERS = [
    # --- payments
    spec("stripe", "live_secret_key", "sk_live_", lambda r: rand(r, r.choice((24, 99)), ALNUM),
         "STRIPE_SECRET_KEY"),
    spec("stripe", "test_secret_key", "sk_test_", lambda r: rand(r, r.choice((24, 99)), ALNUM),
         "STRIPE_SECRET_KEY"),
    spec("stripe", "restricted_key", "rk_live_", lambda r: rand(r, r.choice((24, 99)), ALNUM),
         "STRIPE_RESTRICTED_KEY"),
    spec("stripe", "webhook_secret", "whsec_", [(32, ALNUM)], "STRIPE_WEBHOOK_SECRET"),
    spec("square", "access_token", "EAAA", [(60, URL)], "SQUARE_ACCESS_TOKEN"),
    spec("square", "oauth_secret", "sq0csp-", [(43, URL)], "SQUARE_APPLICATION_SECRET"),
    composite("braintree", "access_token", _braintree, "BRAINTREE_ACCESS_TOKEN"),
    spec("paypal", "client_secret", "", [(80, URL)], "PAYPAL_CLIENT_SECRET", bare=False),
    spec("shopify", "admin_token", "shpat_", [(32, HEX)], "SHOPIFY_ACCESS_TOKEN"),
    spec("shopify", "shared_secret", "shpss_", [(32, HEX)], "SHOPIFY_API_SECRET"),
    spec("shopify", "custom_app_token", "shpca_", [(32, HEX)], "SHOPIFY_ACCESS_TOKEN"),
    spec("shopify", "private_app_password", "shppa_", [(32, HEX)], "SHOPIFY_PASSWORD"),
    spec("adyen", "api_key", "AQE", [(3, ALNUM), "hmfx", (120, B64)], "ADYEN_API_KEY"),
    spec("razorpay", "key_secret", "", [(24, ALNUM)], "RAZORPAY_KEY_SECRET", bare=False),
    spec("plaid", "secret", "", [(30, HEX)], "PLAID_SECRET", bare=False),
    composite("plaid", "access_token", _plaid_access, "PLAID_ACCESS_TOKEN"),
    spec("flutterwave", "secret_key", "FLWSECK-", [(32, HEX), "-X"], "FLW_SECRET_KEY"),
    spec("paystack", "secret_key", "sk_live_", [(40, HEX)], "PAYSTACK_SECRET_KEY"),
    spec("mollie", "api_key", "live_", [(30, ALNUM)], "MOLLIE_API_KEY", bare=False),
    spec("gocardless", "access_token", "live_", [(40, URL)], "GOCARDLESS_ACCESS_TOKEN", bare=False),
    spec("shippo", "api_token", "shippo_live_", [(40, HEX)], "SHIPPO_API_TOKEN"),
    spec("easypost", "api_key", "EZAK", [(54, ALNUM)], "EASYPOST_API_KEY"),
    spec("duffel", "access_token", "duffel_live_", [(43, URL)], "DUFFEL_ACCESS_TOKEN"),
    # --- messaging, chat, e-mail
    spec("slack", "bot_token", "xoxb-", lambda r: f"{digits(r, 12)}-{digits(r, 13)}-{rand(r, 24, ALNUM)}",
         "SLACK_BOT_TOKEN"),
    spec("slack", "user_token", "xoxp-",
         lambda r: f"{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{rand(r, 32, HEX)}", "SLACK_TOKEN"),
    spec("slack", "app_token", "xapp-1-", lambda r: f"A{rand(r, 10, UPNUM)}-{digits(r, 13)}-{rand(r, 64, HEX)}",
         "SLACK_APP_TOKEN"),
    spec("slack", "config_refresh_token", "xoxe-1-", [(140, ALNUM)], "SLACK_CONFIG_REFRESH_TOKEN"),
    composite("slack", "webhook_url", _slack_webhook, "SLACK_WEBHOOK_URL"),
    spec("twilio", "api_key_sid", "SK", [(32, HEX)], "TWILIO_API_KEY"),
    spec("twilio", "auth_token", "", [(32, HEX)], "TWILIO_AUTH_TOKEN", bare=False),
    spec("sendgrid", "api_key", "SG.", [(22, URL), ".", (43, URL)], "SENDGRID_API_KEY"),
    spec("mailgun", "api_key", "key-", [(32, HEX)], "MAILGUN_API_KEY"),
    spec("mailchimp", "api_key", "", lambda r: rand(r, 32, HEX) + "-us" + str(r.randint(1, 21)),
         "MAILCHIMP_API_KEY", bare=False),
    spec("postmark", "server_token", "", lambda r: uid(r), "POSTMARK_SERVER_TOKEN", bare=False),
    spec("telegram", "bot_token", "", lambda r: digits(r, 10) + ":AA" + rand(r, 33, URL),
         "TELEGRAM_BOT_TOKEN",
         uses=("curl https://api.telegram.org/bot{v}/getUpdates",)),
    composite("discord", "bot_token", _discord_bot, "DISCORD_BOT_TOKEN", bare=False),
    composite("discord", "webhook_url", _discord_webhook, "DISCORD_WEBHOOK_URL"),
    composite("msteams", "webhook_url", _teams_webhook, "TEAMS_WEBHOOK_URL"),
    spec("mattermost", "access_token", "", [(26, LOWNUM)], "MATTERMOST_TOKEN", bare=False),
    spec("vonage", "api_secret", "", [(16, ALNUM)], "VONAGE_API_SECRET", bare=False),
    spec("messagebird", "access_key", "", [(25, ALNUM)], "MESSAGEBIRD_ACCESS_KEY", bare=False),
    spec("plivo", "auth_token", "", [(40, ALNUM)], "PLIVO_AUTH_TOKEN", bare=False),
    spec("pusher", "app_secret", "", [(20, HEX)], "PUSHER_APP_SECRET", bare=False),
    composite("intercom", "access_token", _intercom, "INTERCOM_ACCESS_TOKEN"),
    spec("zendesk", "api_token", "", [(40, ALNUM)], "ZENDESK_API_TOKEN", bare=False),
    spec("freshdesk", "api_key", "", [(20, ALNUM)], "FRESHDESK_API_KEY", bare=False),
    spec("brevo", "api_key", "xkeysib-", [(64, HEX), "-", (16, ALNUM)], "BREVO_API_KEY"),
    spec("mailjet", "secret_key", "", [(32, HEX)], "MJ_APIKEY_PRIVATE", bare=False),
    spec("mandrill", "api_key", "md-", [(22, URL)], "MANDRILL_API_KEY"),
    spec("sparkpost", "api_key", "", [(40, HEX)], "SPARKPOST_API_KEY", bare=False),
    spec("resend", "api_key", "re_", [(8, ALNUM), "_", (24, ALNUM)], "RESEND_API_KEY"),
    spec("mailtrap", "api_token", "", [(32, HEX)], "MAILTRAP_API_TOKEN", bare=False),
    spec("stytch", "secret", "secret-live-", [(36, URL)], "STYTCH_SECRET"),
    # --- productivity and SaaS
    spec("atlassian", "api_token", "ATATT3xFfGF0", lambda r: rand(r, 170, URL) + "=" + rand(r, 8, HEXU),
         "JIRA_API_TOKEN"),
    spec("atlassian", "legacy_api_token", "", [(24, ALNUM)], "CONFLUENCE_API_TOKEN", bare=False),
    spec("linear", "api_key", "lin_api_", [(40, ALNUM)], "LINEAR_API_KEY"),
    spec("linear", "oauth_token", "lin_oauth_", [(64, HEX)], "LINEAR_OAUTH_TOKEN"),
    spec("notion", "integration_secret", "secret_", [(43, ALNUM)], "NOTION_TOKEN"),
    spec("notion", "integration_token", "ntn_", lambda r: digits(r, 11) + rand(r, 35, ALNUM), "NOTION_API_KEY"),
    spec("figma", "pat", "figd_", [(40, URL)], "FIGMA_TOKEN"),
    spec("asana", "pat", "2/", lambda r: f"{digits(r, 16)}/{digits(r, 16)}:{rand(r, 32, HEX)}",
         "ASANA_ACCESS_TOKEN"),
    spec("airtable", "pat", "pat", lambda r: rand(r, 14, ALNUM) + "." + rand(r, 64, HEX), "AIRTABLE_API_KEY"),
    spec("okta", "api_token", "00", [(40, URL)], "OKTA_API_TOKEN", bare=False,
         uses=('curl -H "Authorization: SSWS {v}" https://acme.okta.com/api/v1/users',)),
    spec("auth0", "client_secret", "", [(64, URL)], "AUTH0_CLIENT_SECRET", bare=False),
    spec("clickup", "pat", "pk_", lambda r: digits(r, 8) + "_" + rand(r, 32, UPNUM), "CLICKUP_API_TOKEN"),
    spec("trello", "token", "ATTA", [(64, HEX), (8, HEXU)], "TRELLO_TOKEN"),
    spec("dropbox", "access_token", "sl.", lambda r: "u." + rand(r, 140, URL), "DROPBOX_ACCESS_TOKEN"),
    spec("box", "developer_token", "", [(32, ALNUM)], "BOX_DEVELOPER_TOKEN", bare=False),
    spec("typeform", "pat", "tfp_", [(44, ALNUM), "_", (14, ALNUM)], "TYPEFORM_TOKEN"),
    spec("contentful", "pat", "CFPAT-", [(43, URL)], "CONTENTFUL_MANAGEMENT_TOKEN"),
    spec("sanity", "api_token", "sk", [(80, ALNUM)], "SANITY_API_TOKEN", bare=False),
    spec("hubspot", "private_app_token", "pat-na1-", lambda r: uid(r), "HUBSPOT_ACCESS_TOKEN"),
    composite("salesforce", "access_token", _salesforce, "SF_ACCESS_TOKEN"),
    spec("zoho", "refresh_token", "1000.", [(32, HEX), ".", (32, HEX)], "ZOHO_REFRESH_TOKEN"),
    spec("postman", "api_key", "PMAK-", [(24, HEX), "-", (34, HEX)], "POSTMAN_API_KEY"),
    spec("readme", "api_key", "rdme_", [(70, LOWNUM)], "README_API_KEY"),
    spec("frameio", "token", "fio-u-", [(64, URL)], "FRAMEIO_TOKEN"),
    composite("mapbox", "secret_token", _mapbox, "MAPBOX_SECRET_TOKEN"),
    composite("twitter", "bearer_token", _twitter_bearer, "TWITTER_BEARER_TOKEN"),
    spec("facebook", "access_token", "EAAG", [(180, ALNUM)], "FB_ACCESS_TOKEN"),
    spec("spotify", "client_secret", "", [(32, HEX)], "SPOTIFY_CLIENT_SECRET", bare=False),
    spec("twitch", "client_secret", "", [(30, LOWNUM)], "TWITCH_CLIENT_SECRET", bare=False),
    spec("lokalise", "api_token", "", [(40, HEX)], "LOKALISE_API_TOKEN", bare=False),
    spec("zoom", "client_secret", "", [(32, ALNUM)], "ZOOM_CLIENT_SECRET", bare=False),
    spec("docusign", "integration_secret", "", lambda r: uid(r), "DOCUSIGN_SECRET_KEY", bare=False),
    spec("miro", "access_token", "", [(27, URL)], "MIRO_ACCESS_TOKEN", bare=False),
    spec("monday", "api_token", "eyJhbGciOiJIUzI1NiJ9.", lambda r: b64(
        json.dumps({"tid": int(digits(r, 9)), "aai": 11, "uid": int(digits(r, 8)), "iad":
                    "2024-05-01T10:00:00.000Z", "per": "me:write", "actid": int(digits(r, 7)),
                    "rgn": "use1"}, separators=(",", ":")).encode(), url=True, pad=False)
        + "." + rand(r, 43, URL), "MONDAY_API_TOKEN"),
]
