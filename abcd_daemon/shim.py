"""The hook shim: hand a harness payload to the daemon and exit 0, in milliseconds.

Runs as ``hooks/abcd-hook <event>`` under ``python3 -I -S`` (standard library only, no
package import) and as ``abcd hook <event>``. Contract (DESIGN §3.1, invariants 1 and 5):

- Read stdin (at most 1 MiB; a larger payload is replaced by a marker saying so), never
  blocking: reading stops at EOF, when the writer pauses after a complete JSON object,
  or at ``STDIN_DEADLINE_S`` — then what arrived is spooled with ``cut_short`` set in
  the header, and stderr says so.
- ``stop`` and ``user-prompt-submit`` (fired after every response and before every
  prompt) spool a liveness marker instead of the payload: its ``session_id``,
  ``transcript_path``, ``cwd`` and ``hook_event_name``, nothing else — no prompt text,
  no transcript. The daemon follows that transcript from then on.
- Write ``<header line>\\n<payload bytes>`` to ``spool/tmp/<id>.json`` (0o600, O_EXCL,
  O_NOFOLLOW), fsync, rename into ``spool/new/``, fsync the directory — all relative to
  directory descriptors verified by :mod:`safedir` (owner-only, no symlink), so a
  directory another user planted is never written into. The payload is on disk before
  the shim exits, so a daemon that is down, wedged or restarting loses nothing. If
  ``ABCD_HOME`` cannot take it (full disk, unwritable, a refused level), the fallback
  spools the daemon also sweeps are tried in turn (:func:`paths.spools`).
- Ring the doorbell: connect to the daemon's socket and close, with a 50 ms budget; a
  full listen queue (EAGAIN) is retried briefly and reported as busy, never as absent.
  No reply is awaited.
- Record the path taken (``spooled+rang``, ``spooled,daemon-absent``,
  ``spooled,daemon-busy``, ``spooled-fallback…`` or ``lost: <why>``) as one line in
  ``spool/shim.log`` and, on failure, on stderr.
- ``session-start`` additionally prints the cross-repository backlog notice to stderr
  from ``status.json`` — it reads a file and never waits on the daemon.
- Exit status is 0 on every path (exit 2 on SubagentStop would block the sub-agent).
  stdout stays empty.
"""

import posix as os  # the built-in module: ``os`` itself costs ~0.8 ms to import
import sys
import time

if __package__:
    from . import limits, logline, paths, safedir
else:  # run from hooks/abcd-hook with the package directory on sys.path
    import limits  # type: ignore[no-redef]
    import logline  # type: ignore[no-redef]
    import paths  # type: ignore[no-redef]
    import safedir  # type: ignore[no-redef]

EVENTS = ("subagent-stop", "session-end", "session-start", "stop", "user-prompt-submit")
#: Events whose payload is reduced to a liveness marker (see the module docstring).
LIVE_EVENTS = ("stop", "user-prompt-submit")
LIVE_FIELDS = ("session_id", "transcript_path", "cwd", "hook_event_name")
_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync
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


def _read_stdin(cap, deadline_s=limits.STDIN_DEADLINE_S, clock=time.monotonic):
    """Return (payload bytes, over_cap, cut_short). A closed or unreadable stdin is an
    empty payload. Never blocks past ``deadline_s``: a harness writes its payload at
    once, so reading stops at EOF, or as soon as the writer pauses after a complete JSON
    object (Claude Code's /clear leaves stdin open), or at the deadline — then what
    arrived is returned with ``cut_short`` set."""
    try:
        fd = sys.stdin.fileno()
        if os.isatty(fd):
            return b"", False, False
    except (OSError, ValueError, AttributeError):
        return b"", False, False
    import select

    chunks = []
    size = 0
    end = clock() + deadline_s
    cut_short = False
    try:
        while size <= cap:
            if not select.select([fd], [], [], 0)[0]:
                if chunks and _complete_object(chunks):
                    break  # the writer paused after a whole payload: that is all of it
                left = end - clock()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    cut_short = True
                    break
            chunk = os.read(fd, min(cap + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (OSError, ValueError):
        if not chunks:
            return b"", False, False
        cut_short = True
    if size > cap:
        return b"", True, False
    return b"".join(chunks), False, cut_short


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
def _complete_object(chunks):
    """True when ``chunks`` join into one complete JSON object (json is imported only
    here: the usual hook closes stdin and never gets this far)."""
    if not chunks[-1].rstrip().endswith(b"}"):
        return False
    import json

    try:
        return isinstance(json.loads(b"".join(chunks)), dict)
    except (ValueError, RecursionError):
        return False


def _write_into(dir_fd, name, data):
    """Create ``name`` in the directory ``dir_fd`` (O_EXCL, O_NOFOLLOW, 0o600) holding
    ``data``, synced. On failure nothing is left under the name. Raises OSError."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC, 0o600,
                 dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        _datasync(fd)  # data and size: all a new file needs to be read back
    except BaseException:
        os.close(fd)
        try:
            os.unlink(name, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    os.close(fd)


def _spool_into(spool, name, data):
    """Durably place ``data`` at ``spool/new/name``. Every level from the spool's parent
    down is created owner-only or verified (:mod:`safedir`), and the file is written and
    renamed relative to the verified descriptors, so no symlink or foreign directory is
    ever written through. Raises OSError (:class:`safedir.Refused` for a refused level)."""
    spool_fd = safedir.open_spool(spool, create=True)
    tmp_fd = new_fd = -1
    try:
        tmp_fd = safedir.open_level(spool_fd, "tmp", spool + "/tmp", create=True)
        new_fd = safedir.open_level(spool_fd, "new", spool + "/new", create=True)
        _write_into(tmp_fd, name, data)
        os.rename(name, name, src_dir_fd=tmp_fd, dst_dir_fd=new_fd)
        os.fsync(new_fd)
    finally:
        for fd in (new_fd, tmp_fd, spool_fd):
            if fd >= 0:
                os.close(fd)


def _ring(sock_path):
    """Connect to the daemon's socket and close: "rang" when something accepted, "busy"
    when its listen queue stayed full (EAGAIN) for the whole retry budget, "absent"
    otherwise. A full queue is a daemon at work, never a missing one."""
    try:
        if (os.lstat(sock_path).st_mode & 0o170000) != 0o140000:
            return "absent"
    except OSError:
        return "absent"  # no socket: no daemon (and no need to load the socket module)
    import _socket  # the C module: ``socket`` would pull in enum and selectors (~5 ms)
    import errno

    give_up = time.monotonic() + limits.DOORBELL_BUSY_RETRY_S
    while True:
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            s.settimeout(limits.DOORBELL_TIMEOUT_S)
            s.connect(sock_path)
            return "rang"
        except OSError as exc:
            if exc.errno != errno.EAGAIN:
                return "absent"
            if time.monotonic() >= give_up:
                return "busy"
        finally:
            s.close()
        time.sleep(0.005)


def _label(event):
    """The event as logs and messages may name it: an argument that is not one of
    ``EVENTS`` is whatever the harness wiring passed, so it is not repeated."""
    return event if event in EVENTS else "unknown-event"


def _log(home, spool_id, event, taken):
    """Append one line to ``ABCD_HOME/spool/shim.log`` (spool id, event, path taken;
    escaped, so nothing the outside world chose can start a line of its own) — through
    the verified spool directory only: a refused spool gets no log line (stderr already
    said why)."""
    line = "%s %s %s\n" % (spool_id, _label(event), logline.escape(taken))
    try:
        spool_fd = safedir.open_spool(home.rstrip("/") + "/" + paths.SPOOL)
        try:
            fd = os.open(paths.SHIM_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                         | _O_CLOEXEC, 0o600, dir_fd=spool_fd)
        finally:
            os.close(spool_fd)
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
    spools = paths.spools(env)
    primary = spools[0]
    payload, over_cap, cut_short = stdin_reader(limits.PAYLOAD_CAP)
    if event in LIVE_EVENTS and not over_cap:
        payload = live_marker(payload)
    spool_id = _spool_id()
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    header = ('{"abcd_spool":%d,"event":%s,"received_ns":%d,"cwd":%s,"over_cap":%s,'
              '"cut_short":%s}\n') % (
        limits.SPOOL_VERSION, _json_str(event), time.time_ns(), _json_str(cwd),
        "true" if over_cap else "false", "true" if cut_short else "false")
    data = header.encode("utf-8", "replace") + payload
    name = spool_id + ".json"
    path = None
    errors = []
    for spool in spools:
        try:
            _spool_into(spool, name, data)
            path = spool
            break
        except safedir.Refused as exc:
            errors.append(str(exc))
        except OSError as exc:
            errors.append("%s: %s" % (spool, exc.strerror or exc))
    if path is None:
        taken = "lost: " + "; ".join(errors)
        sys.stderr.write("abcd: could not spool the %s payload anywhere (%s); run "
                         "`abcd history ingest` later to recover the transcript\n"
                         % (_label(event), logline.escape(taken)))
        _log(home, spool_id, event, taken)
        return taken
    rang = _ring(paths.socket_path(env))
    taken = ("spooled" if path == primary else "spooled-fallback") + (
        "+rang" if rang == "rang" else ",daemon-" + rang)
    if over_cap:
        sys.stderr.write("abcd: the %s payload was over the %d-byte cap; spooled a marker "
                         "instead of it\n" % (_label(event), limits.PAYLOAD_CAP))
    if cut_short:
        sys.stderr.write("abcd: stdin was still open %gs after the hook started; spooled the %d "
                         "byte(s) of the %s payload that had arrived, marked as cut short\n"
                         % (limits.STDIN_DEADLINE_S, len(payload), _label(event)))
    if path != primary:
        sys.stderr.write("abcd: %s could not take the payload (%s); spooled it in %s\n"
                         % (primary, "; ".join(errors), path))
    _log(home, spool_id, event, taken)
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
    refused = [x for x in status.get("refused_spools", []) if isinstance(x, dict)]
    if refused:
        parts.append("abcd: %d spool director%s refused and never swept: %s." % (
            len(refused), "y is" if len(refused) == 1 else "ies are",
            "; ".join(str(x.get("reason", x.get("path", ""))) for x in refused[:3])))
    if status.get("stale_records"):
        parts.append("abcd: %d stored record(s) were redacted by an older scanner than %s; "
                     "`abcd history rescan --all-repos` re-redacts them." % (
                         int(status.get("stale_records", 0)), str(status.get("scanner", ""))[:80]))
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
        parts.append("abcd: %d hook payload(s) could not be used and are kept, UNREDACTED (%s), "
                     "in spool/failed; `abcd history staged` lists each with its reason, "
                     "`abcd history retry --all` retries them." % (
                         int(status.get("spool_failed", 0)),
                         sizes.human_bytes(int(status.get("spool_failed_bytes", 0)))))
    return " ".join(parts)


def main(argv=None):
    """Entry point: ``abcd-hook <event>``. Returns 0, always."""
    argv = sys.argv if argv is None else argv
    try:
        event = argv[1] if len(argv) > 1 else ""
        if event not in EVENTS:
            sys.stderr.write("abcd: unknown hook event (a %d-character argument; expected one "
                             "of %s); the daemon drops it\n" % (len(event), ", ".join(EVENTS)))
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
