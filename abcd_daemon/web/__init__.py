"""``abcd view``: a local, private web viewer over the same read core as the CLI.

Pure core (HTML and SVG from values; no I/O, no event loop):
:mod:`.outline` (the artefact's structure, read back outside fences), :mod:`.markdown`
(artefact → HTML with the containment invariant), :mod:`.timeline_svg` (one lane per
thread), :mod:`.bars_svg` (per-thread tokens and cost), :mod:`.shell` (page shell,
escaping, packaged assets), :mod:`.pages` (listings), :mod:`.session_page` (one
session, served lazily or exported whole), :mod:`.auth` (token, Host check, read-only).

Synchronous reads: :mod:`.source` (store and index in-process, through the CLI's own
answers: record listing, reconstruction, ``abcd usage``, ``abcd search`` and the
index's session list). The thin async shell: :mod:`.app` (Starlette routes, worker threads,
page cache) and :mod:`.serve` (hypercorn's trio worker on 127.0.0.1).
"""
