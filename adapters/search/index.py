"""A local full-text index on SQLite FTS5, ranked by BM25, with snippets."""

from __future__ import annotations

import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import addressable as ad
from addressable.core.html import html_title

from ..fetch import html_to_text
from .hits import Hit

# BM25 weights per column (url, title, body): a match in the title counts five times.
_WEIGHTS = (0.0, 5.0, 1.0)
_SNIPPET_TOKENS = 24  # words around the matches in a snippet
# FTS5's snippet() weighs every match against every other and against every sentence
# before it, so a document matched more than this is snippeted from a part around its
# first match, not whole.
_MOST_MATCHES = 2000  # phrase matches snippet() weighs in one document, at most
_MOST_WORK = 128 << 20  # matches times characters snippet() goes through, at most
_CHUNK = 1_024  # characters of a document in one part: the part is three of them
_WORD = re.compile(r"\w+", re.UNICODE)
_GAP = re.compile(r"\W+", re.UNICODE)
_SQLITE = b"SQLite format 3\x00"  # the first bytes of every SQLite database file


class LocalIndex:
    """The embedded search backend: documents in an SQLite FTS5 table.

    Build it from text (`add`), files (`add_file`), a folder (`add_folder`) or fetched
    pages (`add_page`). `path` keeps the index in a file; by default it lives in memory.
    A new index is made only where no file is: a file there must be an index already
    (`ArgumentError` otherwise, and the file is left as it is).
    """

    name = "local"

    def __init__(self, path: str | Path = ":memory:") -> None:
        _check_index(path)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        # Scratch tables tokenised as `docs` is: a document's parts, and a query's words.
        self._part = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(url UNINDEXED, title, body,"
                " tokenize='porter unicode61')"
            )
            for sql in _SCRATCH:
                self._part.execute(sql)

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
                f"SELECT rowid, url, title, bm25(docs, {weights}) AS score FROM docs"
                " WHERE docs MATCH ? ORDER BY score, url LIMIT ?",
                (match, limit),
            ).fetchall()
            stems = self._stems(words) if rows else []  # the query's: the same for each hit
            snippets = [self._snippet(rowid, match, words, stems) for rowid, *_ in rows]
        return [
            Hit(title=t, url=u, snippet=" ".join(s.split()), score=round(-score, 6))
            for (_, u, t, score), s in zip(rows, snippets, strict=True)
        ]

    def _snippet(self, rowid: int, match: str, words: list[str], stems: list[str]) -> str:
        """FTS5's snippet of one matched document: of all of it (so the very snippet
        snippet() gives) unless it is matched too often for that, else of the three chunks
        around its first match, with an ellipsis where they leave text out."""
        title, body = self._db.execute(
            "SELECT title, body FROM docs WHERE rowid = ?", (rowid,)
        ).fetchone()
        body = str(body or "")
        cuts = _chunks(body)
        self._fill([(None, body[start:end]) for start, end in cuts])
        matches = self._matches(stems)
        if matches <= _MOST_MATCHES and matches * len(body) <= _MOST_WORK:
            start, end = 0, len(body)
        else:
            # The first word of each stem only: a part's matches are then at most its words.
            match = " OR ".join(f'"{w}"' for w in _distinct(words, stems))
            (first,) = self._part.execute(
                "SELECT coalesce(min(rowid), 0) FROM part WHERE part MATCH ?", (match,)
            ).fetchone()
            start, end = cuts[max(0, first - 1)][0], cuts[min(len(cuts) - 1, first + 1)][1]
        self._fill([(title, body[start:end])])
        row = self._part.execute(
            f"SELECT snippet(part, 1, '', '', '…', {_SNIPPET_TOKENS}) FROM part WHERE part MATCH ?",
            (match,),
        ).fetchone()
        text = str(row[0]) if row else ""
        before = "…" if start > 0 and not text.startswith("…") else ""
        after = "…" if end < len(body) and not text.endswith("…") else ""
        return before + text + after

    def _fill(self, rows: list[tuple[str | None, str]]) -> None:
        """Make `rows` (title, body) the scratch table's only rows, numbered from 0."""
        self._part.execute("DELETE FROM part")
        self._part.executemany(
            "INSERT INTO part (rowid, title, body) VALUES (?, ?, ?)",
            [(i, *row) for i, row in enumerate(rows)],
        )

    def _stems(self, words: list[str]) -> list[str]:
        """The term each query word is indexed as (its first, if it is more than one)."""
        self._part.execute("DELETE FROM words")
        self._part.executemany(
            "INSERT INTO words (rowid, word) VALUES (?, ?)", list(enumerate(words))
        )
        found = dict(
            self._part.execute(
                "SELECT doc, term FROM words_terms WHERE offset = 0 ORDER BY doc"
            ).fetchall()
        )
        return [str(found.get(i, "")) for i in range(len(words))]

    def _matches(self, stems: list[str]) -> int:
        """How many matches snippet() weighs in the scratch table's body: each query word
        (a phrase) counts each token indexed as its stem is."""
        counts = dict(
            self._part.execute(
                "SELECT term, cnt FROM part_terms WHERE col = 'body'"
                f" AND term IN ({', '.join('?' * len(stems))})",
                stems,
            ).fetchall()
        )
        return sum(int(counts.get(stem, 0)) for stem in stems)

    def close(self) -> None:
        self._db.close()
        self._part.close()


_SCRATCH = (
    "CREATE VIRTUAL TABLE part USING fts5(title, body, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE part_terms USING fts5vocab(part, 'col')",
    "CREATE VIRTUAL TABLE words USING fts5(word, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE words_terms USING fts5vocab(words, 'instance')",
)


def _check_index(path: str | Path) -> None:
    """`ArgumentError`, one line, unless `path` is where no file is or holds an index:
    SQLite would write its tables over an empty file, or into another database."""
    name = str(path)
    if name in ("", ":memory:"):  # SQLite's own names for a database of no file
        return
    file = Path(name)
    if not file.exists():
        return
    if not file.is_file():
        raise ad.ArgumentError(f"LocalIndex: {name} is not a file")
    with file.open("rb") as head:
        magic = head.read(len(_SQLITE))
    if not magic:
        raise ad.ArgumentError(
            f"LocalIndex: {name} is an empty file, not an index "
            "(a new index is made only where no file is)"
        )
    if magic != _SQLITE:
        raise ad.ArgumentError(f"LocalIndex: {name} is not an index (not an SQLite database)")
    try:
        uri = f"{file.resolve().as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            row = db.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'docs'"
            ).fetchone()
    except sqlite3.Error as exc:
        raise ad.ArgumentError(f"LocalIndex: {name} cannot be read as an index: {exc}") from None
    if row is None or "using fts5" not in str(row[0]).lower():
        raise ad.ArgumentError(
            f"LocalIndex: {name} is an SQLite database, but not an index (no FTS5 docs table)"
        )


def _chunks(body: str) -> list[tuple[int, int]]:
    """`body` cut into pieces of about `_CHUNK` characters, each cut between words."""
    cuts, start = [], 0
    while start < len(body):
        gap = _GAP.search(body, start + _CHUNK)
        end = gap.end() if gap else len(body)
        cuts.append((start, end))
        start = end
    return cuts or [(0, 0)]


def _distinct(words: list[str], stems: list[str]) -> list[str]:
    """`words` less any indexed as an earlier one is (`stems` say how each is)."""
    seen: dict[str, str] = {}
    for word, stem in zip(words, stems, strict=True):
        seen.setdefault(stem, word)
    return list(seen.values())
