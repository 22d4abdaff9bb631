"""A page's title, readable text and links, read with the standard library's parser.

The one reading of HTML in the project: the summariser's page stubs take their title,
first sentence and links from it, and the adapters' readable text falls back to it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["HtmlPage", "html_markdown", "html_text", "html_title", "read_html", "tidy"]

# Parts that are not the page's text: code, styles, navigation (and the head).
_SKIPPED = frozenset({"script", "style", "noscript", "template", "nav"})
# Elements that stand on lines of their own.
_BLOCK = frozenset(
    {
        *("p", "div", "br", "hr", "pre", "blockquote", "title"),
        *("h1", "h2", "h3", "h4", "h5", "h6"),
        *("section", "article", "header", "footer"),
        *("ul", "ol", "li", "dt", "dd"),
        *("table", "tr", "td", "th"),
    }
)


@dataclass(frozen=True)
class HtmlPage:
    """What a page says: its first <title> (whitespace collapsed), its text (blocks on
    lines of their own, tidied) and the links of its body as written, in order."""

    title: str
    text: str
    links: tuple[str, ...]


class _Reader(HTMLParser):
    """What a page says; with `markdown`, its text as Markdown: links inline as
    `[text](href)`, headings after `#`s, list items after `- `."""

    def __init__(self, markdown: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self._open_links: list[str | None] = []  # each open <a>'s href, None: no link
        self.parts: list[str] = []
        self.links: list[str] = []
        self.title = ""
        self._titles = 0  # <title>s opened so far: the first is the page's
        self._skip = 0
        self._in_head = False  # until </head> or <body>: HTML lets a page leave it open
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._titles += 1
            self._in_title = self._titles == 1
        elif tag in ("head", "body"):
            self._in_head = tag == "head"
        elif tag in _SKIPPED:
            self._skip += 1
        elif not (self._skip or self._in_head):
            self.links += [v for k, v in attrs if k == "href" and v and v.strip()]
        if tag in _BLOCK:
            self.parts.append("\n")
        if self.markdown and not (self._skip or self._in_head):
            self._mark_start(tag, attrs)

    def _mark_start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = next((v.strip() for k, v in attrs if k == "href" and v and v.strip()), None)
            self._open_links.append(href)
            if href is not None:
                self.parts.append("[")
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("- ")

    @property
    def title_read(self) -> bool:
        """Whether the first <title> has ended: the page's title is all in `title`."""
        return self._titles > 0 and not self._in_title

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "head":
            self._in_head = False
        elif tag in _SKIPPED and self._skip:
            self._skip -= 1
        elif tag == "a" and self._open_links and not (self._skip or self._in_head):
            href = self._open_links.pop()
            if href is not None:
                self.parts.append(f"]({href})")
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not (self._skip or self._in_head):
            self.parts.append(data)


@functools.lru_cache(maxsize=32)
def read_html(html: str) -> HtmlPage:
    """The title, text and links of an HTML document. The same page is read once: a
    fetch's readable text, its title and its stub's gist all read it, and a page is
    immutable."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    title = " ".join(reader.title.split())
    return HtmlPage(title, tidy("".join(reader.parts)), tuple(reader.links))


@functools.lru_cache(maxsize=32)
def html_markdown(html: str) -> str:
    """An HTML document's readable text as Markdown (see `_Reader`), as a model is shown
    a fetched page: the links kept where they stand."""
    reader = _Reader(markdown=True)
    reader.feed(html)
    reader.close()
    return tidy("".join(reader.parts))


def html_title(html: str) -> str:
    """The document's <title>, whitespace collapsed; "" when it has none."""
    # Read in pieces, up to the end of the first <title>: a page's title is at its top.
    reader = _Reader()
    for start in range(0, len(html), _TITLE_PIECE):
        reader.feed(html[start : start + _TITLE_PIECE])
        if reader.title_read:
            break
    else:
        reader.close()
    return " ".join(reader.title.split())


_TITLE_PIECE = 4096  # characters


def html_text(html: str) -> str:
    """The plain text of an HTML document, blocks on lines of their own."""
    return read_html(html).text


def tidy(text: str) -> str:
    """Text without spaces at the ends of lines or more than one blank line in a row."""
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
