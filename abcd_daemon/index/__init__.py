"""The search and usage index: one SQLite database derived entirely from records.

``derive`` turns one record into rows (pure); ``db`` opens the database owner-only
and applies, removes and repairs rows (the records stay the source of truth: the
index is rebuilt from them and never holds anything a record does not); ``query``
answers ``abcd search``.
"""
