"""Which repository owns a transcript: git root commits, session notes, the gap marker."""
