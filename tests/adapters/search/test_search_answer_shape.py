"""A web search backend's answer that is JSON but not its API's (an error object, another
service's JSON) is a `BadAnswer`, not an empty search: read as one, it would record a
negative finding that no search made."""

from __future__ import annotations

import json

import pytest

import addressable as ad
import addressable.adapters.search.web as _websearch
from addressable.adapters import BadAnswer, BraveSearch, Search, SearXNG
from tests.helpers.httpserver import LocalServer, Reply

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def serve(server: LocalServer, path: str, answer: object) -> None:
    body = json.dumps(answer).encode()
    server.routes[("GET", path)] = lambda r: Reply(200, body, JSON)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"order": "A-17", "status": "shipped"}, "it has no 'results' list"),
        ({"error": "engine unavailable"}, "it has no 'results' list"),
        ({"results": {"url": "https://a.example/"}}, "its 'results' is a dict, not a list"),
    ],
    ids=["other-json", "error-object", "results-not-a-list"],
)
def test_a_searxng_answer_without_its_results_is_a_bad_answer(
    kit: ad.Toolkit, server: LocalServer, answer: object, said: str
) -> None:
    serve(server, "/search", answer)
    search = Search(kit, SearXNG(server.url("/")))
    with pytest.raises(BadAnswer) as refused:
        search("lock")
    assert str(refused.value) == f"searxng: the answer is not as its API gives it ({said})"
    assert kit.handle("search", {"query": "lock", "fresh": True}) == (
        f"error: BadAnswer: searxng: the answer is not as its API gives it ({said})"
    )
    # No empty search was recorded: no negative finding without a search behind it.
    assert all(r.status is ad.Status.ERROR for r in kit.store.records())


def test_a_searxng_answer_with_no_hits_is_still_an_empty_search(
    kit: ad.Toolkit, server: LocalServer
) -> None:
    serve(server, "/search", {"query": "zeppelin", "number_of_results": 0, "results": []})
    res = Search(kit, SearXNG(server.url("/")))("zeppelin")
    assert res.ok and json.loads(res.payload)["hits"] == []


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED"}},
            "it has no 'web' results and is not a search's answer",
        ),
        ({"order": "A-17", "status": "shipped"}, "it has no 'web' results and is not a"),
        ({"type": "search", "web": {"type": "search"}}, "it has no 'web.results' list"),
    ],
    ids=["error-object", "other-json", "web-without-results"],
)
def test_a_brave_answer_that_is_not_a_web_search_is_a_bad_answer(
    kit: ad.Toolkit,
    server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    answer: object,
    said: str,
) -> None:
    monkeypatch.setattr(_websearch, "BRAVE_URL", server.url("/res/v1/web/search"))
    monkeypatch.setenv("BRAVE_API_KEY", "brv-key-shape")
    serve(server, "/res/v1/web/search", answer)
    search = Search(kit, BraveSearch(kit.secrets))
    with pytest.raises(BadAnswer, match="brave: the answer is not as its API gives it") as refused:
        search("lock")
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert all(r.status is ad.Status.ERROR for r in kit.store.records())


def test_a_brave_search_that_found_no_page_is_an_empty_search(
    kit: ad.Toolkit, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Brave leaves `web` out of a search's answer when it found no page.
    monkeypatch.setattr(_websearch, "BRAVE_URL", server.url("/res/v1/web/search"))
    monkeypatch.setenv("BRAVE_API_KEY", "brv-key-shape")
    serve(server, "/res/v1/web/search", {"type": "search", "query": {"original": "zeppelin"}})
    res = Search(kit, BraveSearch(kit.secrets))("zeppelin")
    assert res.ok and json.loads(res.payload)["hits"] == []
