"""What a stub's text is: one line of plain text (no terminal escape, no control
character), gists made of whole sentences and whole values (an abbreviation's stop
ends no sentence; a gist too long loses whole parts, never words), and no label the
call right before it already shows."""

from __future__ import annotations

import json
import re

import pytest

import addressable as ad
from addressable.context.stubs import make_stub
from tests.helpers import FakeClock

# An escape sequence's introducer or any C0/C1 control: none may reach a stub.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@pytest.fixture
def kit(clock: FakeClock) -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"), clock=clock)


def stub(kit: ad.Toolkit, payload: str, **kw: object) -> str:
    args = kw.pop("args", {"command": "make"})
    res = kit.record("bash", args, payload.encode(), determinism="nondeterministic", **kw)  # type: ignore[arg-type]
    return make_stub(res.record, store=kit.store)[1]


@pytest.mark.parametrize(
    ("last", "kept"),
    [
        ("Error: failed to open config\x00\x07\x1b[?25l at /etc/app.conf", "at /etc/app.conf"),
        ("\x1b]0;build title\x07Error: build_42 failed", "last: Error: build_42 failed"),
        ("\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ Error: job_7 failed", "link"),
        ("Error:\tjob\x9b31m_8 \x1bcfailed", "last: Error: job_8 failed"),
    ],
)
def test_a_last_line_with_escapes_and_controls_is_plain_text_in_the_stub(
    kit: ad.Toolkit, last: str, kept: str
) -> None:
    line = stub(kit, f"step one\nstep two\n{last}\n", meta={"exit_code": 1})
    assert not CONTROL.search(line), repr(line)
    assert kept in line
    assert "title" not in line and "evil.example" not in line  # what a terminal hides


def test_a_claims_label_with_escapes_and_controls_is_plain_text(kit: ad.Toolkit) -> None:
    command = "echo hi\x1b[31m\u2028rm -rf /tmp/x\x07\nls\tx"
    line = stub(kit, "a\nb\n" + "z\n" * 200, args={"command": command})
    assert line.startswith("[claim:") and "] " not in line[: line.index("rm")]
    assert not CONTROL.search(line), repr(line)
    assert "echo hi rm -rf /tmp/x ls x" in line


def page(sentence: str) -> bytes:
    filler = "".join(
        f"<p>Filler paragraph number {i} goes here for length.</p>" for i in range(400)
    )
    head = "<html><head><title>Notes</title></head>"
    return f"{head}<body><p>{sentence}</p>{filler}</body></html>".encode()


@pytest.mark.parametrize(
    "sentence",
    [
        "Please contact Dr. Smith about order A-1029 before Friday.",
        "Orders placed before 2 p.m. ship the same day.",
        "Version 3.11 adds approx. 10 new features to the runtime.",
        "The meeting with Mr. Jones is at 10 a.m. in room 4.",
        "Our office is open Mon. through Fri. for all questions.",
    ],
)
def test_a_pages_first_sentence_is_whole_though_it_holds_abbreviations(
    kit: ad.Toolkit, sentence: str
) -> None:
    url = "https://e.com/notes"
    res = kit.record(
        "fetch",
        {"url": url},
        page(sentence),
        determinism="deterministic",
        key=url,
        media_type="text/html",
    )
    ref = ad.evict(res.record, store=kit.store)
    assert isinstance(ref, ad.Reference)
    assert ref.gist.startswith(f'"Notes": {sentence}')


def test_a_plugged_in_summary_too_long_loses_whole_sentences(kit: ad.Toolkit) -> None:
    res = kit.record(
        "bash", {"command": "make"}, b"line of output\n" * 1500, determinism="nondeterministic"
    )
    first = "The build failed because libfoo 2.3.1 is missing."
    then = " Install it with apt-get install libfoo-dev and rerun make in /srv/build." * 12

    def summarize(record: ad.Record, payload: bytes, budget: int) -> str:
        return first + then

    claim = ad.evict(res.record, store=kit.store, summarizer=summarize)
    assert isinstance(claim, ad.Claim)
    # Whole sentences only, the first ones, each to its stop: not all of them fit.
    whole = first + then
    assert claim.text.startswith(first) and claim.text != whole
    assert whole.startswith(claim.text) and claim.text.endswith("/srv/build.")


def test_a_search_whose_urls_are_long_keeps_the_first_three_whole(
    kit: ad.Toolkit,
) -> None:
    hits = [{"title": f"T{i}", "url": "https://ex.com/" + "seg/" * 80 + str(i)} for i in range(4)]
    data = {"query": "long urls", "backend": "web", "hits": hits}
    res = kit.record(
        "search",
        {"query": "long urls"},
        json.dumps(data).encode(),
        determinism="nondeterministic",
        meta={"query": "long urls"},
    )
    claim = ad.evict(res.record, store=kit.store)
    assert isinstance(claim, ad.Claim)
    assert claim.text.startswith('"long urls", 4 hits: ')
    assert [h["url"] for h in hits if h["url"] in claim.text][:3] == [h["url"] for h in hits[:3]]
    assert not claim.text.endswith((":", ";", "/"))  # whole URLs, no dangling part


def test_a_search_whose_hits_name_their_url_link_keeps_them(kit: ad.Toolkit) -> None:
    hits = [{"title": t, "link": f"https://{t}.com/1"} for t in "abc"]
    payload = json.dumps({"query": "x", "hits": hits}).encode()
    res = kit.record("web_search", {"query": "x"}, payload, determinism="nondeterministic")
    claim = ad.evict(res.record, store=kit.store)
    assert isinstance(claim, ad.Claim)
    urls = [claim.text.find(f"https://{t}.com/1") for t in "abc"]
    assert -1 not in urls and urls == sorted(urls)  # each URL, in rank order


def test_a_reference_without_a_key_does_not_repeat_the_call_right_before_it(
    kit: ad.Toolkit,
) -> None:
    @kit.tool(determinism="deterministic")
    def get_build(build: str) -> str:
        """A build's record."""
        log = [f"step {i} of the build ran without a problem" for i in range(60)]
        return json.dumps({"build_id": "BLD-88123", "status": "passed", "log": log})

    out = kit.handle("get_build", {"build": "latest"})
    call = {"name": "get_build", "arguments": json.dumps({"build": "latest"})}
    messages = [
        {"role": "user", "content": "check the build"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c0", "type": "function", "function": call}],
        },
        {"role": "tool", "tool_call_id": "c0", "content": out},
        {"role": "assistant", "content": "ok"},
    ]
    stub = ad.compact(messages, kit=kit, keep_last=0).messages[2]["content"]
    assert stub.startswith("[ref:") and "BLD-88123" in stub
    assert "latest" not in stub  # the call right before shows what it asked
