"""The hook shim: hand a harness payload to the daemon and exit 0, in milliseconds.

Runs as ``hooks/abcd-hook <event>`` under ``python3 -I -S`` (standard library only, no
package import) and as ``abcd hook <event>``. Contract (DESIGN §3.1, invariants 1 and 5):

- Read stdin (at most 1 MiB; a larger payload is replaced by a marker saying so).
- ``stop`` and ``user-prompt-submit`` (fired after every response and before every
  prompt) spool a liveness marker instead of the payload: its ``session_id``,
  ``transcript_path``, ``cwd`` and ``hook_event_name``, nothing else — no prompt text,
  no transcript. The daemon follows that transcript from then on.
- Write ``<header line>\\n<payload bytes>`` to ``spool/tmp/<id>.json`` (0o600, O_EXCL,
  O_NOFOLLOW), fsync, rename into ``spool/new/``, fsync the directory. The payload is on
  disk before the shim exits, so a daemon that is down, wedged or restarting loses
  nothing. If ``ABCD_HOME`` cannot take it (full disk, unwritable, a symlinked level),
  the same is tried in the fallback spools the daemon also sweeps.
- Ring the doorbell: connect to the daemon's socket and close, with a 50 ms budget. No
  reply is awaited.
- Record the path taken (``spooled+rang``, ``spooled,daemon-absent``, ``spooled-fallback…``
  or ``lost: <why>``) as one line in ``spool/shim.log`` and, on failure, on stderr.
- ``session-start`` additionally prints the cross-repository backlog notice to stderr
  from ``status.json`` — it reads a file and never waits on the daemon.
- Exit status is 0 on every path (exit 2 on SubagentStop would block the sub-agent).
  stdout stays empty.
"""

import posix as os  # the built-in module: ``os`` itself costs ~0.8 ms to import
import sys
import time

if __package__:
    from . import limits, paths
else:  # run from hooks/abcd-hook with the package directory on sys.path
    import limits  # type: ignore[no-redef]
    import paths  # type: ignore[no-redef]

EVENTS = ("subagent-stop", "session-end", "session-start", "stop", "user-prompt-submit")
#: Events whose payload is reduced to a liveness marker (see the module docstring).
LIVE_EVENTS = ("stop", "user-prompt-submit")
LIVE_FIELDS = ("session_id", "transcript_path", "cwd", "hook_event_name")
_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync
SPOOL_VERSION = 1
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _json_str(text):
    """A JSON string literal for ``text`` (no json import on the hot path)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code < 0x20:
            out.append("\\u%04x" % code)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _read_stdin(cap):
    """Return (payload bytes, over_cap). A closed or unreadable stdin is an empty payload."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd):
            return b"", False
        chunks = []
        remaining = cap + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    except (OSError, ValueError, AttributeError):
        return b"", False
    if len(data) > cap:
        return b"", True
    return data, False


class _ScanContext:
    """What the C JSON scanner reads from its owner (``json`` itself would import ``re``:
    ~10 ms, felt on every prompt)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def live_marker(payload):
    """The liveness marker for a Stop / UserPromptSubmit payload: its string fields
    named in ``LIVE_FIELDS``, re-encoded; ``b"{}"`` when the payload is not a JSON
    object (intake then says so)."""
    try:
        import _json

        text = payload.decode("utf-8").strip()
        obj, end = _json.make_scanner(_ScanContext())(text, 0)
        if not isinstance(obj, dict) or text[end:].strip():
            return b"{}"
    except Exception:  # StopIteration, ValueError, RecursionError: not one JSON object
        return b"{}"
    fields = ["%s:%s" % (_json_str(k), _json_str(obj[k]))
              for k in LIVE_FIELDS if isinstance(obj.get(k), str)]
    return ("{" + ",".join(fields) + "}").encode("utf-8", "replace")


def _dirname(path):
    head = path.rstrip("/").rpartition("/")[0]
    return head or ("/" if path.startswith("/") else ".")


def _is_dir(path):
    try:
        return (os.stat(path).st_mode & 0o170000) == 0o040000
    except OSError:
        return False


def _makedirs(path):
    """mkdir -p at 0o700 for the ancestors of a spool (outside abcd's verified chain)."""
    if _is_dir(path):
        return
    parent = _dirname(path)
    if parent != path:
        _makedirs(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass


def _ensure_dir(path):
    """mkdir 0o700 if missing; refuse anything but a real directory we own."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if (st.st_mode & 0o170000) != 0o040000 or st.st_uid != os.geteuid():
        raise OSError("%s is not a real directory owned by this user" % path)


def _spool_into(spool, name, data):
    """Durably place ``data`` at ``spool/new/name``. Raises OSError."""
    _makedirs(_dirname(spool))
    _ensure_dir(spool)
    tmp_dir = spool + "/tmp"
    new_dir = spool + "/new"
    _ensure_dir(tmp_dir)
    _ensure_dir(new_dir)
    tmp = tmp_dir + "/" + name
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        _datasync(fd)  # data and size: all a new file needs to be read back
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    os.rename(tmp, new_dir + "/" + name)
    dfd = os.open(new_dir, os.O_RDONLY | _O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def fallback_spools(env=None):
    """Where a payload goes when ``ABCD_HOME/spool`` cannot take it (the daemon sweeps
    these too): beside the socket, then a per-user directory under the temp dir."""
    env = _env() if env is None else env
    sock_dir = _dirname(paths.socket_path(env))
    tmp_root = (env.get("TMPDIR", "") or "/tmp").rstrip("/") or "/"
    return [sock_dir + "/spool", "%s/abcd-%d/spool" % (tmp_root, os.geteuid())]


def _ring(sock_path):
    """Connect to the daemon's socket and close. True when something accepted."""
    try:
        if (os.lstat(sock_path).st_mode & 0o170000) != 0o140000:
            return False
    except OSError:
        return False  # no socket: no daemon (and no need to load the socket module)
    import _socket  # the C module: ``socket`` would pull in enum and selectors (~5 ms)

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(limits.DOORBELL_TIMEOUT_S)
        s.connect(sock_path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _log(home, line):
    try:
        fd = os.open("%s/%s/%s" % (home, paths.SPOOL, paths.SHIM_LOG),
                     os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | _O_CLOEXEC, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def _env():
    """The environment as str → str (``posix.environ`` holds bytes)."""
    return {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape")
            for k, v in os.environ.items()}


def _spool_id():
    return "%020d-%d-%s" % (time.time_ns(), os.getpid(), os.urandom(4).hex())


def handle(event, env=None, stdin_reader=_read_stdin):
    """Spool one payload for ``event`` and ring the doorbell. Returns the path taken.
    Never raises for anything the outside world did."""
    env = _env() if env is None else env
    home = paths.abcd_home(env)
    primary = home.rstrip("/") + "/" + paths.SPOOL
    payload, over_cap = stdin_reader(limits.PAYLOAD_CAP)
    if event in LIVE_EVENTS and not over_cap:
        payload = live_marker(payload)
    spool_id = _spool_id()
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    header = '{"abcd_spool":%d,"event":%s,"received_ns":%d,"cwd":%s,"over_cap":%s}\n' % (
        SPOOL_VERSION, _json_str(event), time.time_ns(), _json_str(cwd),
        "true" if over_cap else "false")
    data = header.encode("utf-8", "replace") + payload
    name = spool_id + ".json"
    path = None
    errors = []
    for spool in [primary] + fallback_spools(env):
        try:
            _spool_into(spool, name, data)
            path = spool
            break
        except OSError as exc:
            errors.append("%s: %s" % (spool, exc.strerror or exc))
    if path is None:
        taken = "lost: " + "; ".join(errors)
        sys.stderr.write("abcd: could not spool the %s payload anywhere (%s); run "
                         "`abcd history ingest` later to recover the transcript\n" % (event, taken))
        _log(home, "%s %s %s\n" % (spool_id, event, taken))
        return taken
    rang = _ring(paths.socket_path(env))
    taken = ("spooled" if path == primary else "spooled-fallback") + (
        "+rang" if rang else ",daemon-absent")
    if over_cap:
        sys.stderr.write("abcd: the %s payload was over the %d-byte cap; spooled a marker "
                         "instead of it\n" % (event, limits.PAYLOAD_CAP))
    if path != primary:
        sys.stderr.write("abcd: %s could not take the payload (%s); spooled it in %s\n"
                         % (primary, "; ".join(errors), path))
    _log(home, "%s %s %s\n" % (spool_id, event, taken))
    return taken


def backlog_notice(env=None):
    """The session-start notice (one paragraph, or "" when nothing waits), built from
    ``status.json``: counts, sizes and repository names only."""
    import json

    if __package__:
        from . import sizes
    else:
        import sizes  # type: ignore[no-redef]

    env = _env() if env is None else env
    try:
        fd = os.open(paths.abcd_home(env).rstrip("/") + "/" + paths.STATUS_FILE, os.O_RDONLY | os.O_NOFOLLOW | _O_CLOEXEC)
        try:
            raw = os.read(fd, limits.SIDECAR_CAP)
        finally:
            os.close(fd)
        status = json.loads(raw)
    except (OSError, ValueError):
        return ""
    if not isinstance(status, dict):
        return ""
    lanes = [x for x in status.get("lanes", []) if isinstance(x, dict)]
    parts = []
    held = [x for x in lanes if x.get("staged") or x.get("quarantined")]
    if held:
        total = sum(int(x.get("staged_bytes", 0)) + int(x.get("quarantined_bytes", 0)) for x in held)
        names = [str(x.get("name") or str(x.get("root_sha", ""))[:12]) for x in held][:5]
        more = len(held) - len(names)
        parts.append("abcd: %d repositor%s (%s%s) %s holding %s of UNREDACTED transcript text." % (
            len(held), "y" if len(held) == 1 else "ies", ", ".join(names),
            " and %d more" % more if more > 0 else "", "is" if len(held) == 1 else "are",
            sizes.human_bytes(total)))
        overdue = sum(int(x.get("overdue", 0)) for x in held)
        if overdue:
            parts.append("%d staged transcript(s) are past the 168h0m0s staging limit; they are "
                         "drained first." % overdue)
        quarantined = sum(int(x.get("quarantined", 0)) for x in held)
        if quarantined:
            parts.append("%d can never be redacted and are quarantined, awaiting "
                         "`abcd history discard`." % quarantined)
        parts.append("Run `abcd history staged --all-repos` to see them.")
    gaps = [x for x in lanes if x.get("gap_count")]
    if gaps:
        parts.append("abcd: this harness fired SubagentStop %d time(s) without an "
                     "agent_transcript_path; no sub-agent transcript can be captured on it."
                     % sum(int(x.get("gap_count", 0)) for x in gaps))
    missing = status.get("missing")
    if isinstance(missing, dict):
        reasons = {k: int(v) for k, v in (missing.get("reasons") or {}).items()
                   if k != "settling" and isinstance(v, int) and v > 0}
        if reasons:
            soonest = missing.get("soonest_days_left")
            parts.append("abcd: %d harness transcript(s) are not stored (%s)%s. Run `abcd history "
                         "missing --all-repos` to see them." % (
                             sum(reasons.values()),
                             ", ".join("%d %s" % (n, k.replace("-", " ")) for k, n in sorted(reasons.items())),
                             "; the harness deletes the first of them in %d day(s)" % soonest
                             if isinstance(soonest, int) else ""))
    if status.get("spool_failed"):
        parts.append("abcd: %d hook payload(s) could not be used and are kept in "
                     "spool/failed with a reason." % int(status.get("spool_failed", 0)))
    return " ".join(parts)


def main(argv=None):
    """Entry point: ``abcd-hook <event>``. Returns 0, always."""
    argv = sys.argv if argv is None else argv
    try:
        event = argv[1] if len(argv) > 1 else ""
        if event not in EVENTS:
            sys.stderr.write("abcd: unknown hook event %r (expected one of %s); spooling it "
                             "anyway\n" % (event, ", ".join(EVENTS)))
        env = _env()
        taken = handle(event or "unknown", env)
        if event == "session-start":
            notice = backlog_notice(env)
            if notice:
                sys.stderr.write(notice + "\n")
            if "daemon-absent" in taken:
                sys.stderr.write("abcd: the daemon is not running; hook payloads are kept in the "
                                 "spool and captured when it starts (`abcd daemon start`).\n")
    except BaseException as exc:  # a hook must never fail the harness
        try:
            sys.stderr.write("abcd: hook failed unexpectedly (%s: %s); exiting 0\n"
                             % (type(exc).__name__, exc))
        except BaseException:
            pass
    return 0
