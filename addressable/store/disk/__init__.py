"""The embedded default store: diskcache (SQLite plus files) in a folder."""
