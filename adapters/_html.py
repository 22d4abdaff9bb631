"""Readable text and a title from HTML: html2text (the `html` extra) when installed,
for Markdown with the links kept, else the plain text of the project's one HTML reader."""

from __future__ import annotations

from addressable.core.html import html_text, html_title, tidy

__all__ = ["html_title", "html_to_text"]


def html_to_text(html: str) -> str:
    """Readable text of an HTML document: Markdown with links kept when html2text is
    installed, else plain text."""
    try:
        import html2text
    except ImportError:
        return html_text(html)
    converter = html2text.HTML2Text()
    converter.body_width = 0  # no hard wrapping: lines stay whole for grep and replay
    converter.ignore_images = True
    return tidy(converter.handle(html))
