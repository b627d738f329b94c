"""Identity checks: the predicates of the identity kinds (the caller's home, other
homes, git names and handles, the local user, e-mail addresses, harness URLs and
footers) — whether a literal or a path match names a person or an account here.

Same contract as every check (``checks``): ``check(buf, match, ctx) -> bool``, reading
only the match's line, never raising; ``ctx`` is ``checks.Context``.
"""

from __future__ import annotations

import re

from .escapes import ALNUM, boundary_after, boundary_before
from .values import DIGIT

_SEGMENT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEGMENT_OR_TILDE = _SEGMENT | {0x7E}
_HANDLE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")
_NON_USER_HOMES = frozenset({"shared", "guest", "public", "default", "all", "default user", "all users"})
_NON_USER_POSIX = frozenset({b"linuxbrew"})
_RESERVED_HOST = re.compile(rb"(?i)(?:^|\.)(?:example|invalid|test|localhost)$|(?:^|\.)example\.(?:com|net|org)$")
_UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A home root under a mounted volume or a system prefix still names a home.
_MOUNTED = re.compile(rb"(?:^|[^A-Za-z0-9._-]|\\[nrtbf])(?:/Volumes|/mnt|/media|/run/media|/private|/System/Volumes/Data)"
                      rb"(?:/[A-Za-z0-9._ -]+)*\Z")
_URL_USERINFO = re.compile(rb"://[^\s/@\"'\\]*:\Z")
_URL_ROOT = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:(?:\\*/){2}[^/\s\"'\\]*\Z")
_LINE_LEAD = re.compile(rb"[ \t]*(?:>[ \t]*)*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?\Z")
# A robot emoji (raw or as an escaped surrogate pair) and emphasis before the footer.
_ROBOT_TAIL = re.compile(rb"(?:(?:\xf0\x9f\xa4\x96|\\+u[dD]83[eE]\\+u[dD][dD]16)[ ]?)?[_*]{0,3}\Z")
_NOREPLY = (b"noreply@anthropic.com",)
_ALLOWED_DOMAIN = re.compile(
    rb"(?i)(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost|users\.noreply\.github\.com)$"
)
_FILE_TLDS = frozenset(
    b"png jpg jpeg gif svg webp ico bmp js mjs cjs ts tsx jsx css scss json md txt py go rs rb html htm xml "
    b"yaml yml toml lock sh zip gz tar pdf map wasm vue php java kt swift".split()
)


def _line_start(buf: bytes, pos: int, limit: int = 4096) -> int:
    """Start of ``pos``'s line, looking back at most ``limit`` bytes."""
    lo = max(0, pos - limit)
    return buf.rfind(b"\n", lo, pos) + 1 or lo


def _opaque(ident: bytes) -> bool:
    if _UUID.match(ident):
        return True
    if DIGIT.search(ident) and re.search(rb"[A-Z]", ident):
        return True
    return len(ident) >= 16 and re.fullmatch(rb"[0-9a-f]+", ident) is not None and len(re.findall(rb"[0-9]", ident)) >= 4


def session_url(buf, m, ctx) -> bool:
    return not _RESERVED_HOST.search(m.group(1)) and _opaque(m.group(2))


def owns_line(buf, m, ctx) -> bool:
    """The attribution footer stands alone on its (possibly escaped) line."""
    s = m.start()
    lo = _line_start(buf, s, 512)
    before = buf[lo:s]
    # the logical line may start after a JSON \n escape or a string's opening quote
    cut = max(before.rfind(b"\\n"), before.rfind(b"\\r"), before.rfind(b'"'))
    if cut >= 0:
        before = before[cut + (1 if before[cut : cut + 1] == b'"' else 2) :]
    before = _ROBOT_TAIL.sub(b"", before)
    return _LINE_LEAD.match(before) is not None


def home_other(buf, m, ctx) -> bool:
    user = m.group(1)
    s = m.start()
    if user.lower().decode("ascii", "replace") in _NON_USER_HOMES or user in _NON_USER_POSIX:
        return False
    if not user.strip(b".-_"):
        return False
    if user.isdigit():
        return False  # /users/42: a web route, not an account
    if not boundary_before(buf, s, _SEGMENT) and not _MOUNTED.search(buf, max(0, s - 256), s):
        return False  # /usr/home/x, api/admin/users/x: not a home root (a mount is)
    tail = ctx.home_tail
    if tail and user[: len(tail)].lower() == tail and (len(user) == len(tail) or user[len(tail)] not in ALNUM):
        # /Users/me, /Users/me.zip, /Users/me-old: the caller's home (§3.7) when the
        # root before the name is the caller's too, in any spelling of '/'
        root = m.group()[: m.start(1) - s].lower()
        root = root.replace(b"%2f", b"/").replace(b"\\", b"/").replace(b"//", b"/").rstrip(b"/")
        if ctx.home_root.endswith(root.lstrip(b"abcdefghijklmnopqrstuvwxyz:")):
            return False
    return True


#: What stands before a URL's authority: ``scheme:`` and its first ``/`` (plain,
#: ``\/``-escaped or percent-encoded), so the home's ``/`` there is the second.
_AUTHORITY_LEAD = re.compile(rb"(?i)[A-Za-z0-9+.-](?::|%3a)(?:\\*/|%2f)\Z")


def home_self(buf, m, ctx) -> bool:
    """Reference §3.7 anchors: the name must not continue (an ASCII letter or digit
    continues it); a single-segment home also needs a leading boundary (not a path
    byte or '~' before it), waived at a URL's path root. A URL's authority is never a
    home: ``mysql://root:pw@db`` names the user ``root`` (folding it to ``mysql:/~:pw@db``
    would also hide the URL's password from the rules that read it)."""
    s, e = m.span()
    if not boundary_after(buf, e, ALNUM):
        return False
    if _AUTHORITY_LEAD.search(buf, max(0, s - 12), s):
        return False
    if not ctx.home_single_segment or s == 0:
        return True
    if boundary_before(buf, s, _SEGMENT_OR_TILDE):
        return True
    return _URL_ROOT.search(buf, _line_start(buf, s, 512), s) is not None


def literal_alnum(buf, m, ctx) -> bool:
    return boundary_before(buf, m.start(), ALNUM) and boundary_after(buf, m.end(), ALNUM)


def github_user(buf, m, ctx) -> bool:
    s, e = m.span()
    if not (boundary_before(buf, s, _HANDLE) and boundary_after(buf, e, _HANDLE)):
        return False
    repo = ctx.remote_repo
    if repo and buf[e : e + 1] == b"/" and buf[e + 1 : e + 1 + len(repo)].lower() == repo.lower():
        return not boundary_after(buf, e + 1 + len(repo), _HANDLE | {0x2E, 0x5F})
    return True


def local_user(buf, m, ctx) -> bool:
    return boundary_before(buf, m.start(), ALNUM) and boundary_after(buf, m.end(), ALNUM)


def email(buf, m, ctx) -> bool:
    text = m.group()
    local, _, domain = text.rpartition(b"@")
    if local.lower() == b"git" or text.lower() in _NOREPLY:
        return False
    if m.start() >= 1 and buf[m.start() - 1] == 0x3A and _URL_USERINFO.search(buf, _line_start(buf, m.start(), 256), m.start()):
        return False  # the password and host of scheme://user:password@host
    if buf[max(0, m.start() - 5) : m.start()].replace(b"\\", b"").endswith((b"://", b"//")):
        return False  # the user and host of scheme://user@host: an account, not an address
    if _ALLOWED_DOMAIN.search(domain) or domain.rsplit(b".", 1)[-1].lower() in _FILE_TLDS:
        return False
    return True  # no trailing boundary: an address followed by '_' is still one
