from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
import tracemalloc
import zlib
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import respx

import addressable as ad
from addressable.adapters import BadAnswer, BraveSearch, Fetch, LocalIndex, Search, SearXNG
from tests.helpers import FakeClock
from tests.helpers.httpserver import LocalServer, Page, Reply

TOPICS = [
    "threading",
    "asyncio",
    "sqlite3",
    "json",
    "pathlib",
    "subprocess",
    "socket",
    "logging",
    "decimal",
    "random",
]


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """120 small documents: 12 on each of 10 topics."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(120):
        topic = TOPICS[i % 10]
        extra = " It is thread-safe: a lock guards it." if topic == "threading" and i < 20 else ""
        (folder / f"{topic}-{i:03}.txt").write_text(
            f"The {topic} module, part {i}. It documents {topic} functions and classes.{extra}\n"
        )
    return folder


def test_local_index_ranks_hits_with_snippets_and_ids(kit: ad.Toolkit, corpus: Path) -> None:
    index = LocalIndex()
    assert index.add_folder(corpus, "*.txt") == 120
    search = Search(kit, index)
    res = search("thread-safe lock")
    assert res.record.determinism is ad.Determinism.NONDETERMINISTIC
    data = json.loads(res.payload)
    assert data["backend"] == "local" and len(data["hits"]) == 10
    top = sorted(Path(h["url"]).name for h in data["hits"][:2])
    assert top == ["threading-000.txt", "threading-010.txt"]  # the two that say it
    assert all("lock" in h["snippet"] for h in data["hits"][:2])
    scores = [h["score"] for h in data["hits"]]
    assert scores == sorted(scores, reverse=True) and scores[1] > scores[2]
    hits = search.hits(res.id)
    assert [h.record.key for h in hits] == [h["url"] for h in data["hits"]]
    assert len({h.id for h in hits} | {res.id}) == 11
    assert all(h.record.meta["found_by"] == res.id for h in hits)
    text = kit.handle("search", {"query": "thread-safe lock"})
    assert all(h.id in text for h in hits)


def test_the_same_query_after_a_new_document_gives_another_answer(
    kit: ad.Toolkit, corpus: Path
) -> None:
    index = LocalIndex()
    index.add_folder(corpus, "*.txt")
    search = Search(kit, index)
    before = search("asyncio functions", limit=5)
    again = search("asyncio functions", limit=5, fresh=True)
    assert again.id == before.id  # the same answer: the same result, observed twice
    index.add(
        "https://docs.example/asyncio-guide",
        "asyncio functions guide",
        "All about asyncio functions, asyncio functions and more asyncio functions.",
    )
    after = search("asyncio functions", limit=5, fresh=True)
    assert after.id != before.id
    assert json.loads(after.payload)["hits"][0]["url"] == "https://docs.example/asyncio-guide"
    assert search.queries(kit.session) == [("asyncio functions", "local")] * 3


def test_an_empty_answer_is_kept_as_a_negative_finding(kit: ad.Toolkit) -> None:
    index = LocalIndex()
    index.add("https://x/1", "one", "nothing relevant here")
    search = Search(kit, index)
    res = search("zeppelin")
    assert res.ok and json.loads(res.payload)["hits"] == []
    assert (
        kit.handle("search", {"query": "zeppelin", "fresh": True})
        == "No results for 'zeppelin' (local)."
    )


def test_verify_is_refused(kit: ad.Toolkit) -> None:
    index = LocalIndex()
    index.add("https://x/1", "one", "alpha")
    res = Search(kit, index)("alpha")
    with pytest.raises(ad.NotReplayable, match="nondeterministic"):
        kit.replay(res.id, verify=True)


def test_a_later_fetch_of_a_hit_shares_its_key(kit: ad.Toolkit, server: LocalServer) -> None:
    server.pages["/guide"] = Page(b"<title>Guide</title><p>the guide to locks</p>")
    fetch = Fetch(kit)
    index = LocalIndex()
    index.add_page(fetch(server.url("/guide")))
    found = Search(kit, index)("locks")
    (hit,) = Search(kit, index, name="search2").hits(found.id)
    later = fetch(json.loads(hit.payload)["url"])
    linked = {r.tool for r in kit.store.records(key=later.record.key)}
    assert linked == {"fetch", "search_hit"}
    assert hit.record.meta["found_by"] == found.id


def test_a_hit_whose_url_holds_a_credential_is_keyed_as_a_fetch_of_it_is(
    kit: ad.Toolkit,
) -> None:
    index = LocalIndex()
    index.add("https://docs.example/private?access_token=TOK-77&page=2", "one", "alpha")
    found = Search(kit, index)("alpha")
    (hit,) = Search(kit, index, name="search2").hits(found.id)
    assert hit.record.key == "https://docs.example/private?access_token=%5Bredacted%5D&page=2"
    assert "TOK-77" not in (hit.record.key or "")


def test_searxng_json_api() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    body = {
        "query": "lock",
        "number_of_results": 2,
        "results": [
            {
                "url": "https://a.example/1",
                "title": "Locks",
                "content": "A lock is...",
                "engine": "duckduckgo",
                "score": 1.5,
            },
            {
                "url": "https://b.example/2",
                "title": "Mutex",
                "content": "Mutual exclusion",
                "engine": "wikipedia",
                "score": 0.7,
            },
        ],
        "answers": [],
        "suggestions": [],
    }
    with respx.mock(assert_all_called=True) as mock:
        route = mock.get("https://searx.example/search").mock(
            return_value=httpx.Response(200, json=body)
        )
        res = Search(kit, SearXNG("https://searx.example/"))("lock")
    assert route.calls.last.request.url.params["format"] == "json"
    hits = json.loads(res.payload)["hits"]
    assert [h["url"] for h in hits] == ["https://a.example/1", "https://b.example/2"]
    assert hits[0]["snippet"] == "A lock is..."
    assert res.record.args["backend"] == "searxng"


def test_brave_web_api_keeps_no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store = ad.open_store(str(tmp_path / "store"))
    kit = ad.Toolkit(store)
    monkeypatch.setenv("BRAVE_API_KEY", "brv-key-7c1f9e")
    body = {
        "type": "search",
        "query": {"original": "lock"},
        "web": {
            "type": "search",
            "results": [
                {
                    "title": "Lock (computer science)",
                    "url": "https://w.example/lock",
                    "description": "A lock or mutex is a synchronization primitive.",
                }
            ],
        },
    }
    with respx.mock(assert_all_called=True) as mock:
        route = mock.get("https://api.search.brave.com/res/v1/web/search").mock(
            return_value=httpx.Response(200, json=body)
        )
        res = Search(kit, BraveSearch(kit.secrets))("lock")
    request = route.calls.last.request
    assert request.headers["X-Subscription-Token"] == "brv-key-7c1f9e"
    assert request.url.params["q"] == "lock"
    assert json.loads(res.payload)["hits"][0]["snippet"].startswith("A lock or mutex")
    store.close()
    for file in (tmp_path / "store").rglob("*"):
        if file.is_file():
            assert b"brv-key-7c1f9e" not in file.read_bytes()


def test_a_failing_backend_is_recorded_and_raised() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    with respx.mock:
        respx.get("https://searx.example/search").mock(return_value=httpx.Response(503))
        with pytest.raises(httpx.HTTPStatusError):
            Search(kit, SearXNG("https://searx.example"))("lock")
    (rec,) = kit.store.records()
    assert rec.status is ad.Status.ERROR and rec.meta["query"] == "lock"


def _files_hold(folder: Path, secret: str) -> list[Path]:
    return [f for f in folder.rglob("*") if f.is_file() and secret.encode() in f.read_bytes()]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_searxng_credential_reaches_neither_the_model_nor_the_store(
    server: LocalServer, tmp_path: Path, path: str
) -> None:
    secret = "hunter2-7f3e1a"
    server.routes[("GET", "/search")] = lambda r: Reply(500, b"no")
    store = ad.open_store(str(tmp_path / "store"))
    kit = ad.Toolkit(store)
    url = f"http://admin:{secret}@127.0.0.1:{server.port}/"
    Search(kit, SearXNG(url))
    if path == "sync":
        text = kit.handle("search", {"query": "lock"})
    else:
        text = asyncio.run(kit.ahandle("search", {"query": "lock"}))
    assert server.requests[-1].headers["Authorization"].startswith("Basic ")  # it was sent
    assert secret not in text and "\n" not in text
    assert text.startswith("error: HTTPStatusError: searxng: 'http://admin:%5Bredacted%5D@")
    assert text.endswith("/search?q=lock&format=json' answered 500 Internal Server Error")
    (rec,) = store.records()
    assert rec.error is not None and secret not in rec.error
    store.close()
    assert _files_hold(tmp_path / "store", secret) == []


def test_a_searxng_url_keeps_its_own_parameters_and_no_key_is_stored(
    server: LocalServer, tmp_path: Path
) -> None:
    secret = "k-4d9b0c2e"
    status = [200]
    body = json.dumps({"results": [{"url": "https://a.example/1", "title": "A"}]}).encode()
    server.routes[("GET", "/searx/search")] = lambda r: Reply(
        status[0], body, {"Content-Type": "application/json"}
    )
    store = ad.open_store(str(tmp_path / "store"))
    kit = ad.Toolkit(store)
    search = Search(kit, SearXNG(server.url(f"/searx/?api_key={secret}&q=old&lang=en")))
    found = search("lock")
    assert json.loads(found.payload)["hits"][0]["url"] == "https://a.example/1"
    sent = server.requests[-1].path
    assert sent == f"/searx/search?api_key={secret}&lang=en&q=lock&format=json"
    status[0] = 503
    text = kit.handle("search", {"query": "lock", "fresh": True})
    assert secret not in text and "api_key=[redacted]&lang=en" in text
    store.close()
    assert _files_hold(tmp_path / "store", secret) == []


def test_a_client_error_naming_the_searxng_url_names_it_redacted() -> None:
    secret = "pw-91c2aa"

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot reach {request.url}", request=request)

    kit = ad.Toolkit(ad.open_store("memory://"))
    client = httpx.Client(transport=httpx.MockTransport(refuse))
    Search(kit, SearXNG(f"https://me:{secret}@searx.invalid/", client=client))
    text = kit.handle("search", {"query": "lock"})
    assert text.startswith("error: ConnectError: cannot reach https://me:%5Bredacted%5D@")
    (rec,) = kit.store.records()
    assert rec.error is not None and secret not in rec.error and secret not in text


def test_a_brave_error_is_one_line_and_holds_no_key(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brv-key-5e2d")
    kit = ad.Toolkit(ad.open_store("memory://"))

    def unauthorized(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text="no")

    client = httpx.Client(transport=httpx.MockTransport(unauthorized))
    Search(kit, BraveSearch(kit.secrets, client=client))
    text = kit.handle("search", {"query": "lock"})
    assert text == (
        "error: HTTPStatusError: brave: 'https://api.search.brave.com/res/v1/web/search"
        "?q=lock&count=10' answered 401 Unauthorized"
    )
    (rec,) = kit.store.records()
    assert rec.error is not None and "brv-key-5e2d" not in rec.error


@pytest.mark.parametrize("url", ["not a url", "file:///etc", "ftp://searx.example/"])
def test_a_searxng_url_that_is_not_http_is_refused_when_made(url: str) -> None:
    with pytest.raises(ad.ArgumentError, match="only http and https URLs"):
        SearXNG(url)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"x", "not an index (not an SQLite database)"),
        (b"# my notes\n" * 300, "not an index (not an SQLite database)"),
        (b"", "an empty file, not an index"),
        (None, "an SQLite database, but not an index"),
    ],
    ids=["tiny", "text", "empty", "another-database"],
)
def test_a_local_index_refuses_a_file_that_is_not_one_and_leaves_it(
    tmp_path: Path, data: bytes | None, said: str
) -> None:
    file = tmp_path / "index"
    if data is None:
        with sqlite3.connect(file) as db:
            db.execute("CREATE TABLE notes (body TEXT)")
        db.close()
        data = file.read_bytes()
    else:
        file.write_bytes(data)
    with pytest.raises(ad.ArgumentError, match=re.escape(said)) as refused:
        LocalIndex(file)
    assert "\n" not in str(refused.value)
    assert file.read_bytes() == data


def test_a_local_index_file_is_made_where_none_is_and_opened_again(tmp_path: Path) -> None:
    file = tmp_path / "index.sqlite"
    LocalIndex(file).add("https://x/1", "Locks", "a lock is thread-safe")
    assert [h.url for h in LocalIndex(file).search("lock", 5)] == ["https://x/1"]
    with pytest.raises(ad.ArgumentError, match="is not a file"):
        LocalIndex(tmp_path)


def test_a_recent_identical_query_is_served_from_the_store(
    kit: ad.Toolkit, clock: FakeClock
) -> None:
    index = LocalIndex()
    index.add("https://x/1", "one", "alpha beta")
    search = Search(kit, index, reuse_within=timedelta(minutes=30))
    first = search("alpha")
    index.add("https://x/2", "two", "alpha gamma")  # the live index has moved on
    clock.advance(minutes=10)
    again = search("alpha")
    assert again.replayed and again.id == first.id
    assert search.queries(kit.session) == [("alpha", "local")]  # it was not run again
    text = kit.handle("search", {"query": "alpha"})
    assert text.startswith("[the same search ran at 09:00: its stored results follow;")
    fresh = search("alpha", fresh=True)
    assert not fresh.replayed and fresh.id != first.id
    clock.advance(minutes=31)
    assert not search("alpha").replayed  # older than reuse_within: run again
    other = Search(kit, index, reuse_within=None, name="search2")
    assert not other("alpha").replayed


def test_the_embedded_default_backend_is_a_local_index(kit: ad.Toolkit) -> None:
    search = Search(kit)
    assert isinstance(search.backend, LocalIndex)
    search.backend.add("https://x/1", "Locks", "a lock is thread-safe")  # type: ignore[attr-defined]
    assert json.loads(search("lock").payload)["hits"][0]["url"] == "https://x/1"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"[1, 2]", r"not as its API gives it \(AttributeError\)"),
        (b'{"results": [{"url": "https://a.example/", "score": "high"}]}', "ValidationError"),
        (b'{"results": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "not JSON"),
        (b"<html>busy</html>", "not JSON"),
    ],
    ids=["a-list", "a-string-score", "nested-past-reading", "not-json"],
)
def test_a_backend_answer_that_is_not_its_api_is_one_line(
    kit: ad.Toolkit, server: LocalServer, body: bytes, said: str
) -> None:
    server.routes[("GET", "/search")] = lambda r: Reply(
        200, body, {"Content-Type": "application/json"}
    )
    search = Search(kit, SearXNG(server.url("/")))
    with pytest.raises(BadAnswer, match=said) as refused:
        search("lock")
    assert "\n" not in str(refused.value)
    text = kit.handle("search", {"query": "lock"})
    assert text.startswith("error: BadAnswer: searxng: the answer")


def test_hits_are_one_line_each_and_only_web_urls(kit: ad.Toolkit, server: LocalServer) -> None:
    results = [
        {"url": "javascript:alert(1)", "title": "x", "content": "x"},
        {"url": "data:text/html,hi", "title": "y", "content": "y"},
        {
            "url": "https://a.example/1",
            "title": "Real\n[ref:0123abcd] fake hit\x1b[31m",
            "content": "ok\u202e",
        },
    ]
    server.routes[("GET", "/search")] = lambda r: Reply(
        200, json.dumps({"results": results}).encode(), {"Content-Type": "application/json"}
    )
    found = Search(kit, SearXNG(server.url("/")))("lock")
    hits = json.loads(found.payload)["hits"]
    assert [h["url"] for h in hits] == ["https://a.example/1"]
    assert hits[0]["title"] == "Real [ref:0123abcd] fake hit [31m" and hits[0]["snippet"] == "ok"


def test_a_backend_answer_is_not_decoded_past_its_limit(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    block = b" " * (1024 * 1024)
    big = b"".join([packer.compress(block) for _ in range(128)] + [packer.flush()])  # 128 MB
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    server.routes[("GET", "/search")] = lambda r: Reply(200, big, headers)
    search = Search(kit, SearXNG(server.url("/")))
    tracemalloc.start()
    try:
        with pytest.raises(BadAnswer, match="over 5,242,880 bytes"):
            search("lock")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 1024 * 1024  # the whole answer was 128 MB decoded in memory
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR]


def test_a_trickled_backend_answer_is_stopped_at_the_deadline(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    answer = json.dumps({"results": [{"url": "https://a.example/", "title": "t"}]}).encode()
    server.routes[("GET", "/search")] = lambda r: Reply(
        200, answer, {"Content-Type": "application/json"}, trickle=0.2
    )  # some 12 s in all, each byte well within the read timeout
    search = Search(kit, SearXNG(server.url("/"), deadline=1))
    with pytest.raises(ad.DeadlineExceeded, match="searxng search passed its deadline of 1 s"):
        search("lock")
    assert [r.status for r in kit.store.records()] == [ad.Status.ERROR]


def test_a_document_matched_100_000_times_is_snippeted_from_a_part_of_it(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    small, big = LocalIndex(), LocalIndex()
    small.add("https://x/small", "small", "".join(f"INFO line {i} served\n" for i in range(10)))
    big.add_file(_log(tmp_path / "app.log", 100_000))
    timings = []
    for index in (small, big, small, big):
        began = time.perf_counter()
        (hit,) = index.search("INFO", 10)
        timings.append((time.perf_counter() - began, hit))
    (_, small_hit), (_, big_hit) = timings[2:]
    assert big_hit.url.endswith("app.log") and big_hit.title == "app"
    assert big_hit.snippet.startswith("INFO line 0 ") and big_hit.snippet.endswith("…")
    assert len(big_hit.snippet.split()) == len(small_hit.snippet.split()) == 24
    # A ratio of the two in one run, not a clock: it was thousands when the whole document
    # was read for a snippet; a loaded machine has made it 52, so the bar sits well above.
    assert min(t for t, _ in timings[1::2]) < 200 * max(0.01, min(t for t, _ in timings[::2]))


def test_a_snippet_is_the_one_fts5_gives_for_a_document_matched_a_few_times(
    tmp_path: Path,
) -> None:
    text = "Intro words here. " * 200 + "A lock is thread-safe. " + "Other text. " * 300
    index = LocalIndex()
    index.add("https://x/1", "doc", text)
    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE VIRTUAL TABLE d USING fts5(b, tokenize='porter unicode61')")
    raw.execute("INSERT INTO d VALUES (?)", (text,))
    for query in ("thread-safe lock", "intro", "lock other"):
        match = " OR ".join(f'"{w}"' for w in query.replace("-", " ").split())
        (want,) = raw.execute(
            "SELECT snippet(d, 0, '', '', '…', 24) FROM d WHERE d MATCH ?", (match,)
        ).fetchone()
        (hit,) = index.search(query, 5)
        assert hit.snippet == " ".join(want.split())


def _log(path: Path, lines: int) -> Path:
    path.write_text("".join(f"INFO line {i} served\n" for i in range(lines)))
    return path


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        pytest.param(
            '{"results":[{"url":"http://a/?q=\\ud800","title":"t"}]}',
            "a hit['url'] holds a lone surrogate",
            id="surrogate-in-a-url",
        ),
        pytest.param(
            '{"results":[{"url":"http://a/","title":"t\\udfff"}]}',
            "a hit['title'] holds a lone surrogate",
            id="surrogate-in-a-title",
        ),
        pytest.param(
            '{"results":[{"url":"http://a/","title":"t","score":NaN}]}',
            "a hit['score'] is nan",
            id="nan",
        ),
        pytest.param(
            '{"results":[{"url":"http://a/","title":"t","score":1e999}]}',
            "a hit['score'] is inf",
            id="infinity",
        ),
    ],
)
def test_a_searxng_answer_that_is_not_json_text_is_a_bad_answer(
    kit: ad.Toolkit, server: LocalServer, answer: str, said: str
) -> None:
    # Python's JSON reader takes these; they cannot be recorded. The fault is the
    # backend's, not the model's (it was an ArgumentError naming `value['hits']`).
    server.routes[("GET", "/search")] = lambda r: Reply(
        200, answer.encode(), {"Content-Type": "application/json"}
    )
    Search(kit, SearXNG(server.url("/")))
    out = kit.handle("search", {"query": "lock"})
    assert out.startswith(
        f"error: BadAnswer: searxng: the answer is not as its API gives it ({said}"
    )
    assert "\n" not in out
    with pytest.raises(BadAnswer):
        SearXNG(server.url("/")).search("lock", 5)
