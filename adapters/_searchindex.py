"""A local full-text index on SQLite FTS5, ranked by BM25, with snippets."""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path

import addressable as ad

from ._hits import Hit
from ._html import html_title, html_to_text

# BM25 weights per column (url, title, body): a match in the title counts five times.
_WEIGHTS = (0.0, 5.0, 1.0)
_SNIPPET_TOKENS = 24  # words around the matches in a snippet
_WORD = re.compile(r"\w+", re.UNICODE)


class LocalIndex:
    """The embedded search backend: documents in an SQLite FTS5 table.

    Build it from text (`add`), files (`add_file`), a folder (`add_folder`) or fetched
    pages (`add_page`). `path` keeps the index in a file; by default it lives in memory.
    """

    name = "local"

    def __init__(self, path: str | Path = ":memory:") -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(url UNINDEXED, title, body,"
                " tokenize='porter unicode61')"
            )

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM docs").fetchone()
        return int(count)

    def add(self, url: str, title: str, text: str) -> None:
        """Index one document; a document with the same URL is replaced."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM docs WHERE url = ?", (url,))
            self._db.execute(
                "INSERT INTO docs (url, title, body) VALUES (?, ?, ?)", (url, title, text)
            )

    def add_file(self, path: str | Path, url: str | None = None) -> None:
        """Index a text or HTML file, under `url` or its file:// URL."""
        file = Path(path).resolve()
        raw = file.read_text(encoding="utf-8", errors="replace")
        if file.suffix.lower() in (".html", ".htm"):
            title, text = html_title(raw) or file.stem, html_to_text(raw)
        else:
            title, text = file.stem, raw
        self.add(url or file.as_uri(), title, text)

    def add_folder(
        self, folder: str | Path, pattern: str = "**/*", base_url: str | None = None
    ) -> int:
        """Index every file under `folder` matching `pattern`; returns how many. With
        `base_url`, a file's URL is the base joined with its relative path."""
        root = Path(folder).resolve()
        count = 0
        for file in sorted(root.glob(pattern)):
            if file.is_file():
                relative = file.relative_to(root).as_posix()
                self.add_file(file, f"{base_url.rstrip('/')}/{relative}" if base_url else None)
                count += 1
        return count

    def add_page(self, result: ad.Result) -> None:
        """Index a page a Fetch adapter fetched, under the URL it was fetched from."""
        url = str(result.record.meta.get("final_url") or result.record.args.get("url"))
        text = result.text
        if "html" in result.record.media_type.lower():
            self.add(url, html_title(text) or url, html_to_text(text))
        else:
            self.add(url, url, text)

    def search(self, query: str, limit: int) -> list[Hit]:
        words = _WORD.findall(query)
        if not words:
            return []
        # Each word quoted (so that no word is read as FTS5 syntax), any word may match:
        # BM25 ranks the documents that match more of them, and more rarely, first.
        match = " OR ".join(f'"{w}"' for w in words)
        weights = ", ".join(str(w) for w in _WEIGHTS)
        with self._lock:
            rows = self._db.execute(
                f"SELECT url, title, snippet(docs, 2, '', '', '…', {_SNIPPET_TOKENS}),"
                f" bm25(docs, {weights}) AS score FROM docs WHERE docs MATCH ?"
                " ORDER BY score, url LIMIT ?",
                (match, limit),
            ).fetchall()
        return [
            Hit(title=t, url=u, snippet=" ".join(s.split()), score=round(-score, 6))
            for u, t, s, score in rows
        ]

    def close(self) -> None:
        self._db.close()
