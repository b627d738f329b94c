"""Directories abcd owns, opened by descriptor one level at a time (standard library
only, no package imports: the hook shim imports this module directly, like
:mod:`abcd_daemon.paths`).

The rule (DESIGN §2): every directory abcd writes into or sweeps is either created by
abcd (``mkdir`` 0o700) or verified on every open — a real directory (never a symlink),
owned by this process's effective uid, not group- or world-writable. :func:`problem`
is that rule, the one definition of it; :mod:`abcd_daemon.fsio.dirs` applies it to the
store's path-based chains too.

Why descriptors: another user who can write to a level (``/tmp``) can swap a name for a
symlink between a check and a use. Here each level is opened relative to the descriptor
of the level above with ``O_NOFOLLOW | O_DIRECTORY``, then checked with ``fstat`` on the
descriptor itself, so what was checked is what is used. Once a level is verified nobody
else can write into it, so everything below it is ours to trust or create. Callers then
open, rename and unlink entries relative to the leaf's descriptor (``dir_fd=``).

The level a chain starts from (``ABCD_HOME``, the socket directory, ``$TMPDIR/abcd-<uid>``)
is verified like the rest; the directory holding it (``/tmp``, ``$HOME``) is opened as
it is — it belongs to the system or the user, not to abcd.
"""

import posix

if __package__:
    from .paths import DIR_MODE
else:  # imported by the hook shim with the package directory on sys.path
    from paths import DIR_MODE  # type: ignore[no-redef]

_O_CLOEXEC = getattr(posix, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(posix, "O_DIRECTORY", 0)
_OPEN_LEVEL = posix.O_RDONLY | _O_DIRECTORY | posix.O_NOFOLLOW | _O_CLOEXEC
_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFLNK = 0o120000


class Refused(OSError):
    """A directory abcd will not use; ``str()`` names it and says why and what to do."""

    def __init__(self, path, why):
        OSError.__init__(self, "%s %s; refusing it (move it aside: abcd recreates it "
                               "owner-only)" % (path, why))
        self.path = path
        self.why = why


def problem(st, euid=None):
    """What makes the directory with ``stat`` result ``st`` unusable, or "" when it is
    fine: not a directory (a symlink included), another owner, group/world-writable."""
    kind = st.st_mode & _S_IFMT
    if kind == _S_IFLNK:
        return "is a symlink"
    if kind != _S_IFDIR:
        return "is not a directory"
    euid = posix.geteuid() if euid is None else euid
    if st.st_uid != euid:
        return "is owned by uid %d, not by this user (uid %d)" % (st.st_uid, euid)
    if st.st_mode & 0o022:
        return "is group- or world-writable (mode %s)" % oct(st.st_mode & 0o7777)
    return ""


def _dirname(path):
    head = path.rstrip("/").rpartition("/")[0]
    return head or ("/" if path.startswith("/") else ".")


def _basename(path):
    return path.rstrip("/").rpartition("/")[2]


def _makedirs(path):
    """``mkdir -p`` (0o700) for the directories above a chain's first level."""
    try:
        if (posix.stat(path).st_mode & _S_IFMT) == _S_IFDIR:
            return
    except OSError:
        pass
    parent = _dirname(path)
    if parent != path:
        _makedirs(parent)
    try:
        posix.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass


def open_level(parent_fd, name, path, create=False):
    """Open the directory ``name`` under ``parent_fd`` (``path`` names it in messages) and
    verify it; with ``create``, make it 0o700 first if it is missing. Returns the
    descriptor (the caller closes it). Raises :class:`Refused`, or ``FileNotFoundError``
    when it is missing and ``create`` is false."""
    if create:
        try:
            posix.mkdir(name, DIR_MODE, dir_fd=parent_fd)
        except FileExistsError:
            pass
    try:
        fd = posix.open(name, _OPEN_LEVEL, dir_fd=parent_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP (a symlink), ENOTDIR, EACCES: say which
        try:
            why = problem(posix.stat(name, dir_fd=parent_fd, follow_symlinks=False))
        except OSError:
            why = ""
        raise Refused(path, why or "could not be opened (%s)" % exc.strerror) from None
    try:
        why = problem(posix.fstat(fd))
    except OSError as exc:
        why = "could not be examined (%s)" % exc.strerror
    if why:
        posix.close(fd)
        raise Refused(path, why)
    return fd


def open_chain(first, parts=(), create=False):
    """Open and verify ``first`` (a chain's first abcd-owned level, e.g. ``ABCD_HOME``)
    and each of ``parts`` below it; return the leaf's descriptor. With ``create``,
    missing levels are made (and the directories above ``first`` with ``mkdir -p``).
    Raises :class:`Refused` naming the failing level, or ``FileNotFoundError``."""
    first = first.rstrip("/") or "/"
    above = _dirname(first)
    if create:
        _makedirs(above)
    top = posix.open(above, posix.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        fd = open_level(top, _basename(first), first, create)
    finally:
        posix.close(top)
    path = first
    for part in parts:
        path = path + "/" + part
        try:
            child = open_level(fd, part, path, create)
        finally:
            posix.close(fd)
        fd = child
    return fd


def open_spool(spool, parts=(), create=False):
    """Open the spool directory ``spool`` (``<first level>/spool``), or ``parts`` below it,
    verifying every level from the spool's parent — ``ABCD_HOME``, the socket directory
    or ``$TMPDIR/abcd-<uid>`` — down."""
    return open_chain(_dirname(spool), (_basename(spool),) + tuple(parts), create)
