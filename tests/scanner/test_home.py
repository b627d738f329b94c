"""The caller's home (reference §3.7): every spelling folded to ~, anchors respected."""

from __future__ import annotations

import json

import pytest

from abcd_daemon.errors import RedactionResidual
from abcd_daemon.scanner import Identity, build_scanner, redact_text
from abcd_daemon.scanner.pipeline import verify

from .helpers import is_json

HOME = Identity(home="/Users/me", user="me")
ROOT = Identity(home="/root", user="root")


@pytest.fixture(scope="module")
def me():
    return build_scanner(HOME)


@pytest.fixture(scope="module")
def root():
    return build_scanner(ROOT)


@pytest.mark.parametrize(
    "raw, expected",
    [
        (b"cd /Users/me/src", b"cd ~/src"),
        (b'{"cwd":"/Users/me/src"}', b'{"cwd":"~/src"}'),
        (b'{"p":"\\/Users\\/me\\/x"}', b'{"p":"~\\/x"}'),
        (b'{"p":"\\\\\\/Users\\\\\\/me\\\\\\/x"}', b'{"p":"~\\\\\\/x"}'),
        (b"open %2FUsers%2Fme%2Fnotes.md", b"open ~%2Fnotes.md"),
        (b"open %252FUsers%252Fme%252Fx", b"open ~%252Fx"),
        (b"file:///Users/me/notes.md", b"file://~/notes.md"),
        (b"/USERS/ME/x", b"~/x"),
        (b"/Users/me", b"~"),
        (b"/Users/me.zip", b"~.zip"),
        (b"/Users/me-old/x", b"~-old/x"),
        (b"/Users/me_snapshot/x", b"~_snapshot/x"),
        (b"https://ci.example.com/Users/me.zip", b"https://ci.example.com~.zip"),
        (b"/Volumes/T7/Users/me_snapshot/x", b"/Volumes/T7~_snapshot/x"),
    ],
)
def test_the_callers_home_is_folded_in_every_spelling(me, raw, expected):
    out = redact_text(me, raw)
    assert out.text == expected
    assert out.home_paths == 1 and out.secrets == 0


def test_the_home_folded_through_a_unicode_escape_view(me):
    raw = b'{"p":"\\u002fUsers\\u002fme\\u002fx"}'
    out = redact_text(me, raw).text
    assert is_json(out) and b"Users" not in out


def test_a_longer_name_is_not_the_callers_home(me):
    out = redact_text(me, b"/Users/metoo/x")
    assert out.text == b"[redacted-path]/x"  # another user's home, not ~
    assert out.kinds == {"home_path_other": 1}


@pytest.mark.parametrize("raw", [b"/var/root/x", b"~/root/x", b"/rootfs/etc/hosts", b"chroot/root"])
def test_a_single_segment_home_needs_a_leading_boundary(root, raw):
    assert redact_text(root, raw).text == raw


@pytest.mark.parametrize(
    "raw, expected",
    [(b"ls /root/.ssh", b"ls ~/.ssh"), (b'{"p":"/root"}', b'{"p":"~"}'), (b"//root/x", b"/~/x"),
     (b"https://host.dev/root/x", b"https://host.dev~/x"), (b"git@host:/root/x", b"git@host:~/x")],
)
def test_a_single_segment_home_is_folded_where_it_stands(root, raw, expected):
    assert redact_text(root, raw).text == expected


def test_other_users_homes_are_redacted_but_system_folders_are_not(me):
    raw = b"/Users/alice/x /home/bob/y /Users/Shared/z /home/linuxbrew/.linuxbrew C:\\Users\\carol\\w"
    out = redact_text(me, raw)
    assert out.text == b"[redacted-path]/x [redacted-path]/y /Users/Shared/z /home/linuxbrew/.linuxbrew [redacted-path]\\w"
    assert out.home_paths == 3


def test_the_user_name_in_a_path_encoded_project_folder_is_redacted():
    sc = build_scanner(Identity(home="/Users/dain", user="dain"))
    out = redact_text(sc, b'{"p":"~/.claude/projects/-Users-dain-workspace-x"}')
    assert out.text == b'{"p":"~/.claude/projects/-Users-[redacted-user]-workspace-x"}'


def test_a_generic_account_name_is_only_an_account_where_it_stands(root):
    out = redact_text(root, b"the root cause; ssh root@build-host")
    assert out.text == b"the root cause; ssh [redacted-user]@build-host"


def test_home_counters_are_separate_from_secrets(me):
    raw = json.dumps({"a": "/Users/me/x /home/zed/y 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"}).encode()
    out = redact_text(me, raw)
    assert (out.home_paths, out.secrets) == (2, 1)


def test_the_literal_home_surviving_anywhere_refuses(me):
    text = b"line one\nnothing changed here /Users/me/secret-notes\n"
    with pytest.raises(RedactionResidual) as err:
        verify(me, text, [])  # no changed lines: only the literal backstop can see it
    assert err.value.kinds == ["home_path_self"]
    assert b"/Users/me" not in str(err.value).encode()


@pytest.mark.parametrize("raw", [
    b"DATABASE_URL=mysql://root:kTp4EilsS2aQnjUHc6LZQ9SMDc@127.0.0.1:3306/shop",
    b'{"uri":"mongodb:\\/\\/root:kTp4EilsS2aQnjUHc6LZQ9SMDc@localhost:27017"}',
    b"open mysql%3A%2F%2Froot%3AkTp4EilsS2aQnjUHc6LZQ9SMDc%40db",
])
def test_a_url_whose_user_is_named_like_the_home_keeps_its_password_masked(root, raw):
    """``root`` in ``mysql://root:pw@db`` is the URL's user, not ``/root``: folding it
    to ``mysql:/~:pw@db`` hid the password from the rules that read a URL."""
    out = redact_text(root, raw).text
    assert b"kTp4EilsS2aQnjUHc6LZQ9SMDc" not in out and b":/~" not in out and b"%2F~" not in out


def test_a_file_url_and_a_path_under_root_are_still_folded(root):
    assert redact_text(root, b"file:///root/x and cd /root/app").text == b"file://~/x and cd ~/app"
