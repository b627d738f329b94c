"""The daemon's trio shell (see :mod:`.app` for the nursery tree). Everything here is
I/O and scheduling around the synchronous core; no formats or rules live here."""
