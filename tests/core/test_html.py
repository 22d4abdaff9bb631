"""The one reading of HTML: a page's title, its text and its links, for the adapters'
readable text and the summariser's page stubs alike."""

from __future__ import annotations

import pytest

import addressable as ad
from addressable.adapters import html_title, html_to_text
from addressable.core.html import html_markdown, read_html

PAGE = """<!DOCTYPE html><html><head><title>Threads &amp; locks</title>
<link href="/style.css"><script>var x = "<p>not text</p>";</script></head>
<body><nav><a href="/home">Home</a></nav>
<h1>threading</h1><p>A <a href="lock.html">Lock</a> is <b>not</b> re-entrant.</p>
<table><tr><td>acquire</td><td>release</td></tr></table>
<svg><title>icon</title></svg><p>Last words</p>"""


def test_a_page_gives_its_first_title_its_text_by_block_and_its_body_links() -> None:
    page = read_html(PAGE)
    assert page.title == "Threads & locks"
    lines = [line for line in page.text.splitlines() if line]
    assert lines == [
        "threading",
        "A Lock is not re-entrant.",
        "acquire",
        "release",
        "icon",
        "Last words",
    ]
    assert page.links == ("lock.html",)  # not the head's, not the navigation's


def test_a_head_left_open_ends_where_the_body_starts() -> None:
    page = read_html("<html><head><title>T</title><style>p{}</style><body><p>Text</p>")
    assert (page.title, page.text) == ("T", "Text")


def test_text_after_the_last_tag_is_kept() -> None:
    assert read_html("<p>one</p>two &amp; three").text == "one\ntwo & three"


def test_a_fetched_page_is_shown_as_markdown_with_its_links_where_they_stand() -> None:
    lines = [line for line in html_to_text(PAGE).splitlines() if line]
    assert lines == [
        "# threading",
        "A [Lock](lock.html) is not re-entrant.",
        "acquire",
        "release",
        "icon",
        "Last words",
    ]
    assert html_title(PAGE) == "Threads & locks"
    # the same whatever is installed: no other converter is ever used
    assert html_to_text(PAGE) == html_markdown(PAGE)


def test_markdown_keeps_list_items_and_text_of_anchors_without_a_link() -> None:
    text = html_markdown('<ul><li>one</li><li><a name="x">two</a> <a href="/t">three</a></li></ul>')
    assert [line for line in text.splitlines() if line] == ["- one", "- two [three](/t)"]


def test_a_page_stub_reads_the_page_as_the_adapters_do() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    body = PAGE + "".join(f"<p>Paragraph {n} of the page.</p>" for n in range(300))
    res = kit.record(
        "fetch",
        {"url": "https://docs.example/threading.html"},
        body.encode(),
        determinism="deterministic",
        key="https://docs.example/threading.html",
        media_type="text/html",
    )
    gist = ad.evict(res.record, store=kit.store).gist  # type: ignore[union-attr]
    assert gist.startswith('"Threads & locks": A Lock is not re-entrant.')
    assert "https://docs.example/lock.html" in gist
    assert "/home" not in gist and "style.css" not in gist and "not text" not in gist


@pytest.mark.parametrize(
    "page",
    [
        # a title cut across the pieces the title is read in, and a long page after it
        "<html><head>"
        + " " * 4090
        + "<title>Split &amp;\n title</title></head>"
        + "<body>"
        + "<p>text</p>" * 5000,
        # no title, and a title only in an SVG at the end of a long page
        "<p>x</p>" * 5000,
        "<p>x</p>" * 5000 + "<svg><title>late</title></svg>",
        # a title that never ends
        "<title>open " + "words " * 2000,
        # a second title before the first ends, and a title named in a script first
        "<script>let t = '<title>no</title>'</script><title>first<title>second</title>",
    ],
)
def test_the_title_is_the_one_a_whole_reading_finds(page: str) -> None:
    assert html_title(page) == read_html(page).title
