"""The caller's identity (reference §3.8) and the identity rules built from it.

:func:`probe_identity` runs ONE ``git config -z --get-regexp`` listing under a
scrubbed environment (repository-selection and config-injection variables removed,
global config kept) and folds in the ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` values:
every value found is a target (a persona adds something to redact, never replaces
one). :func:`identity_rules` turns an :class:`Identity` into concrete rules from the
``identity.*`` templates of the rule table.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from collections.abc import Mapping

from .rules import Rule

IDENTITY_KEYS = r"^((user|author|committer)\.(name|email)|remote\.origin\.url)$"
_GITHUB_REMOTE = re.compile(r"(?i)github\.com[:/]([A-Za-z0-9-]+)/([A-Za-z0-9._-]*)")
# Variables that select another repository or inject configuration.
_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
          "GIT_NAMESPACE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG",
          "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
          "GIT_CONFIG_NOSYSTEM", "GIT_DISCOVERY_ACROSS_FILESYSTEM")
_PERSONA_ENV = ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")
#: Account names that identify no person: reported only where an account name
#: stands (``name@host``), never as a bare word.
GENERIC_ACCOUNTS = frozenset(
    "root admin administrator user users dev developer runner ubuntu debian fedora centos ec2-user vagrant "
    "node app build ci test tester guest docker git www www-data nobody daemon pi vscode codespace "
    "jenkins circleci travis home default sandbox".split()
)
MIN_EMAIL_LEN = 5
MIN_NAME_LEN = 3
PROBE_TIMEOUT_S = 5.0


@dataclasses.dataclass(frozen=True)
class Identity:
    """Every value that names the caller. Empty fields disable their rules."""

    names: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    remote_user: str = ""
    remote_repo: str = ""
    home: str = ""
    user: str = ""


def probe_identity(repo_root: str | None, env: Mapping[str, str] | None = None) -> Identity:
    """Probe git config (all scopes, one process) plus the persona environment.

    ``env`` defaults to ``os.environ``; ``home`` is its ``HOME`` (trailing ``/``
    trimmed), ``user`` the home's basename. Never raises: git missing, a broken
    repository or a timeout leaves the git-derived fields empty."""
    try:
        return _probe(repo_root, dict(os.environ if env is None else env))
    except Exception:  # never raises: a probe that breaks leaves git's fields empty
        env = dict(os.environ if env is None else env)
        home = str(env.get("HOME", "")).rstrip("/")
        return Identity(home=home, user=home.rsplit("/", 1)[-1] if home else "")


def _probe(repo_root: str | None, env: dict[str, str]) -> Identity:
    names: list[str] = []
    emails: list[str] = []
    remote = ""
    for key, value in _config_listing(repo_root, env):
        if key.endswith(".name"):
            names.extend(value.split("\n"))
        elif key.endswith(".email"):
            emails.extend(value.split("\n"))
        elif key == "remote.origin.url":
            remote = value.strip()
    for var in _PERSONA_ENV:
        (names if var.endswith("NAME") else emails).append(env.get(var, ""))
    owner, repo = "", ""
    m = _GITHUB_REMOTE.search(remote)
    if m:
        owner, repo = m.group(1), m.group(2).removesuffix(".git")
    home = env.get("HOME", "").rstrip("/")
    return Identity(
        names=_distinct(names),
        emails=_distinct(emails),
        remote_user=owner,
        remote_repo=repo,
        home=home,
        user=home.rsplit("/", 1)[-1] if home else "",
    )


def _config_listing(repo_root: str | None, env: dict[str, str]) -> list[tuple[str, str]]:
    scrubbed = {k: v for k, v in env.items() if k not in _SCRUB and not k.startswith("GIT_CONFIG_KEY_")
                and not k.startswith("GIT_CONFIG_VALUE_")}
    cmd = ["git"]
    if repo_root and os.path.isdir(repo_root):
        cmd += ["-C", repo_root]
    cmd += ["config", "-z", "--get-regexp", IDENTITY_KEYS]
    try:
        proc = subprocess.run(cmd, env=scrubbed, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []  # no key matched, or git refused: nothing half-read
    out = []
    for entry in proc.stdout.decode("utf-8", "replace").split("\0"):
        if entry:
            key, _, value = entry.partition("\n")
            out.append((key, value))
    return out


def _distinct(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        v = v.strip()
        if v and v.casefold() not in {o.casefold() for o in out}:
            out.append(v)
    return tuple(out)


def identity_rules(template: Rule, identity: Identity) -> Rule | None:
    """The concrete rule for an ``identity.*`` template, or None when the identity
    has nothing for it. Literal values match case-insensitively, longest first."""
    src = template.source
    if src == "identity.home":
        return _home_rule(template, identity.home) if identity.home.strip("/") else None
    if src == "identity.emails":
        values = [e for e in identity.emails if len(e) >= MIN_EMAIL_LEN and 0 < e.find("@") < len(e) - 1]
    elif src == "identity.names":
        handle = identity.remote_user.casefold()
        values = [n for n in identity.names if len(n) >= MIN_NAME_LEN and n.casefold() != handle]
    elif src == "identity.github":
        values = [identity.remote_user] if identity.remote_user else []
    elif src == "identity.user":
        user = identity.user
        if not user:
            return None
        if len(user) <= 2 or user.casefold() in GENERIC_ACCOUNTS:
            # A generic account name is only the caller where an account name
            # stands: right before the '@' of user@host.
            return dataclasses.replace(
                template, regex="(?i:" + re.escape(user) + ")(?=@)", keywords=(user.lower() + "@",),
                reach=len(user) + 2,
            )
        values = [user, user.replace(".", "-")]  # and the path-encoded folder spelling
    else:
        return None
    values = sorted({v for v in values if v}, key=len, reverse=True)
    if not values:
        return None
    regex = "(?i:" + "|".join(re.escape(v) for v in values) + ")"
    return dataclasses.replace(
        template, regex=regex, keywords=tuple(sorted({v.lower() for v in values})), reach=max(map(len, values)) + 1
    )


_SEP = r"(?:\\*/|%(?:25)?2[fF])"


#: The spellings of '/' a home is searched for as a whole keyword: plain, JSON-escaped
#: once, twice and three times, percent-encoded once and twice.
HOME_SEPARATORS = ("/", "\\/", "\\\\\\/", "\\\\\\\\\\\\\\/", "%2f", "%252f")


def _home_rule(template: Rule, home: str) -> Rule:
    """home_path_self: the home's segments joined by any spelling of ``/`` (plain,
    JSON-escaped ``\\/``, ``%2F``, ``%252F``), matched case-insensitively. Keywords
    are the whole home in each uniform spelling (the escaping backslashes before
    the first ``/`` are taken by the anchor run)."""
    segments = [s for s in home.split("/") if s]
    regex = "(?i:" + "".join(_SEP + re.escape(s) for s in segments) + ")"
    keywords = tuple(
        dict.fromkeys(("/" + "/".join(segments)).lower().replace("/", sep).lstrip("\\") for sep in HOME_SEPARATORS)
    )
    return dataclasses.replace(
        template, regex=regex, keywords=keywords, anchor="\\\\", back=16, reach=max(map(len, keywords)) + 2
    )


def home_is_single_segment(home: str) -> bool:
    return len([s for s in home.split("/") if s]) == 1
