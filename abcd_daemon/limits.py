"""Fixed limits shared by the shim and the daemon (standard library only, no imports).

These are facts of the on-disk formats and the harness contract, not tunables; the
tunables (budgets, intervals, watch roots) live in :mod:`abcd_daemon.config`.
"""

KIB = 1 << 10
MIB = 1 << 20

#: A hook payload larger than this is not spooled; a marker saying so is spooled instead.
PAYLOAD_CAP = 1 * MIB
#: A transcript (and a record) larger than this is refused whole, never truncated.
TRANSCRIPT_CAP = 64 * MIB
#: A record body larger than this is never held whole when it is read back: reconstruct
#: reads it lean and writes its artefact as it renders, the daemon streams it (or the
#: artefact) from disk as it sends it.
STREAM_ABOVE = 16 * MIB
#: Stage sidecars, quarantine reasons, the gap marker, harness meta sidecars.
SIDECAR_CAP = 64 * KIB
#: config.toml.
CONFIG_CAP = 256 * KIB
#: The longest id (session, agent) abcd accepts; an id is a file name.
ID_MAX_LEN = 128
#: Characters an id may carry.
ID_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
#: Seconds the shim waits to ring the daemon's doorbell before giving up.
DOORBELL_TIMEOUT_S = 0.05
#: Seconds the shim keeps retrying a doorbell the daemon's full listen queue refused
#: (EAGAIN): a busy daemon, not an absent one.
DOORBELL_BUSY_RETRY_S = 0.25
#: Seconds the shim waits for its stdin to reach EOF or a complete JSON object. The
#: harness writes the payload at once; SessionEnd hooks get 1.5 s in all, so the shim
#: must have spooled what arrived well before that.
STDIN_DEADLINE_S = 1.0
#: The spool header's format version (the first line of every spooled file); intake
#: refuses any other.
SPOOL_VERSION = 1
