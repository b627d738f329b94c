"""The identity probe (reference §3.8) with real git config files."""

from __future__ import annotations

import os
import subprocess

import pytest

from abcd_daemon.scanner import Identity, build_scanner, probe_identity, redact_text


def _env(home) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def persona(tmp_path):
    """A temp HOME with a global identity and a repository with a different local one."""
    home = tmp_path / "home" / "grace"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Grace Hopper\n\temail = grace@navy-mail.mil\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = _env(home)
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Amazing Grace"], env=env, check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.email", "ag@cobol-works.org"], env=env, check=True)
    subprocess.run(["git", "-C", str(repo), "config", "remote.origin.url", "git@github.com:ghopper/compiler.git"],
                   env=env, check=True)
    return home, repo, env


def test_global_and_repo_local_identities_are_both_collected(persona):
    home, repo, env = persona
    ident = probe_identity(str(repo), env)
    assert set(ident.names) == {"Grace Hopper", "Amazing Grace"}
    assert set(ident.emails) == {"grace@navy-mail.mil", "ag@cobol-works.org"}
    assert (ident.remote_user, ident.remote_repo) == ("ghopper", "compiler")
    assert ident.home == str(home) and ident.user == "grace"


def test_a_transcript_naming_both_identities_stores_neither(persona):
    home, repo, env = persona
    sc = build_scanner(probe_identity(str(repo), env))
    raw = (f'{{"t":"by Grace Hopper <grace@navy-mail.mil> and Amazing Grace <ag@cobol-works.org>'
           f' in {home}/src, see github.com/ghopper/other"}}').encode()
    out = redact_text(sc, raw).text
    for value in (b"Grace Hopper", b"navy-mail", b"Amazing Grace", b"cobol-works", str(home).encode(), b"ghopper"):
        assert value not in out, value
    assert out == (b'{"t":"by [redacted-name] <[redacted-email]> and [redacted-name] <[redacted-email]>'
                   b' in ~/src, see github.com/[redacted-user]/other"}')


def test_the_own_repository_slug_is_public(persona):
    home, repo, env = persona
    sc = build_scanner(probe_identity(str(repo), env))
    assert redact_text(sc, b"clone ghopper/compiler").text == b"clone ghopper/compiler"


def test_persona_environment_values_are_added(persona):
    home, repo, env = persona
    env = {**env, "GIT_AUTHOR_NAME": "Ada Byron", "GIT_COMMITTER_EMAIL": "ci-bot@builds.corp.dev"}
    ident = probe_identity(str(repo), env)
    assert "Ada Byron" in ident.names and "Grace Hopper" in ident.names
    assert "ci-bot@builds.corp.dev" in ident.emails


def test_an_inherited_git_dir_does_not_redirect_the_probe(persona, tmp_path):
    home, repo, env = persona
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], env=env, check=True)
    subprocess.run(["git", "-C", str(other), "config", "user.name", "Someone Else"], env=env, check=True)
    ident = probe_identity(str(repo), {**env, "GIT_DIR": str(other / ".git")})
    assert "Someone Else" not in ident.names and "Amazing Grace" in ident.names


def test_without_git_the_identity_comes_from_the_environment_only(tmp_path):
    env = {"HOME": str(tmp_path / "u"), "PATH": str(tmp_path / "nowhere"), "GIT_AUTHOR_EMAIL": "x@y-z.io"}
    ident = probe_identity(str(tmp_path), env)
    assert ident == Identity(emails=("x@y-z.io",), home=str(tmp_path / "u"), user="u")


def test_a_missing_repository_is_probed_without_it(persona, tmp_path):
    home, repo, env = persona
    ident = probe_identity(str(tmp_path / "does-not-exist"), env)
    assert ident.names == ("Grace Hopper",)


def test_implausible_identity_values_do_not_arm_matchers():
    sc = build_scanner(Identity(names=("x", "Al"), emails=("e", "a@"), home="", user=""))
    raw = b"x Al e a@ plain words"
    assert redact_text(sc, raw).text == raw
