"""How the disk store finds and removes stray files: values diskcache wrote to files of
their own whose rows never committed (a writer killed in between)."""

from __future__ import annotations

import re
import sqlite3
from contextlib import suppress
from pathlib import Path

import diskcache

from ..backend import translated

# How diskcache names the file of a large value: two levels of folders, then random hex.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")


class DiskStrays:
    """The stray files of the disk backend, a base of it: the backend sets the
    directory."""

    failures: tuple[type[BaseException], ...]
    location: str
    directory: Path

    @translated("listing")
    def strays(self) -> dict[str, int]:
        # Every file is written inside a transaction, before its row is committed; a
        # writer killed in between leaves the file with no row. The rows are read on a
        # connection of their own: inside gc's transaction that is the committed state.
        db = sqlite3.connect(
            f"{(self.directory / diskcache.core.DBNAME).as_uri()}?mode=ro", uri=True
        )
        try:
            known = {
                str(name)
                for (name,) in db.execute("SELECT filename FROM Cache WHERE filename IS NOT NULL")
            }
        finally:
            db.close()
        found: dict[str, int] = {}
        for path in self.directory.glob("*/*/*.val"):
            name = path.relative_to(self.directory).as_posix()
            if _VALUE_FILE.fullmatch(name) and name not in known:
                with suppress(FileNotFoundError):  # removed meanwhile by its deleter
                    found[name] = path.stat().st_size
        return found

    @translated("deleting")
    def remove_stray(self, name: str) -> None:
        if not _VALUE_FILE.fullmatch(name):
            return  # not a file of the store's own naming: never touched
        path = self.directory / name
        path.unlink(missing_ok=True)
        for folder in (path.parent, path.parent.parent):  # as diskcache does: empty ones go
            with suppress(OSError):
                folder.rmdir()
