"""Readable text and a title from HTML: html2text (the `html` extra) when installed,
else a plain-text rendering with the standard library's parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "head"}
_BLOCK = {
    "p",
    "div",
    "br",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "section",
    "article",
    "dt",
    "dd",
    "table",
    "ul",
    "ol",
    "hr",
    "title",
}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP and self._skip:
            self._skip -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_title(html: str) -> str:
    """The document's <title>, whitespace collapsed; "" when it has none."""
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.title.split())


def html_to_text(html: str) -> str:
    """Readable text of an HTML document: Markdown with links kept when html2text is
    installed, else plain text."""
    try:
        import html2text
    except ImportError:
        parser = _Text()
        parser.feed(html)
        text = "".join(parser.parts)
    else:
        converter = html2text.HTML2Text()
        converter.body_width = 0  # no hard wrapping: lines stay whole for grep and replay
        converter.ignore_images = True
        text = converter.handle(html)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
