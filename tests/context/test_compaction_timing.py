"""Compacting before the trigger when prompt caching makes it pay: `compaction_pays`,
`compact(cache_prices=)` and the benchmark's `addressable` strategy."""

from __future__ import annotations

from typing import Any

import pytest

import addressable as ad
from addressable.bench.sessions import Session
from addressable.bench.settings import Options
from addressable.bench.simulate import simulate
from addressable.context.compaction import Listing
from addressable.context.messages import IMAGE_TOKENS

PAGE = "\n".join(f"section {n}: the page says something about item {n}" for n in range(150))


def turn(k: int, text: str) -> list[dict[str, Any]]:
    """One agent message with a call, and its result (flattened shape)."""
    return [
        {
            "role": "assistant",
            "content": f"step {k}",
            "tool_calls": [{"id": f"c{k}", "name": "fetch", "arguments": {"n": k}}],
        },
        {"role": "tool", "tool_call_id": f"c{k}", "name": "fetch", "content": text},
    ]


def history(pages: int, small: int) -> list[dict[str, Any]]:
    """`pages` large results, then `small` results too small to evict."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the pages"}]
    for k in range(pages):
        messages += turn(k, f"page {k}\n{PAGE}")
    for k in range(pages, pages + small):
        messages += turn(k, "ok")
    return messages


def pays_by_the_rule(messages: list[dict[str, Any]], keep: int, prices: ad.CachePrices) -> bool:
    """The documented rule, worked out here from the list: what the old pages' stubs,
    each counted at the least a stub takes (a head of 8 tokens and a gist of 12), take
    off each request, for as many requests as the list has made so far (no trigger),
    against what compacting writes again from the first page on, its stubs in the
    pages' place."""
    results = [n for n, m in enumerate(messages) if m["role"] == "tool"]
    agents = [n for n, m in enumerate(messages) if m["role"] == "assistant"]
    rewrite_from = saved = 0
    for index in results[: len(results) - keep]:
        text = messages[index]["content"]
        if text == "ok":
            continue
        tokens = ad.count_tokens(text)
        saved += tokens - (8 + 12)
        rewrite_from = rewrite_from or index
    rewrite = ad.message_tokens(messages[rewrite_from:]) - saved
    return prices.read * saved * len(agents) >= ad.PAYBACK * prices.write * rewrite


def test_old_results_pay_for_a_compaction_once_carried_long_enough() -> None:
    prices = ad.CachePrices()
    answers = [ad.compaction_pays(history(2, n), keep_last=3) for n in range(1, 40)]
    assert answers == [pays_by_the_rule(history(2, n), 3, prices) for n in range(1, 40)]
    # a short session so far: not yet; a long one, likely to go on: yes, and it stays so
    assert answers[0] is False and answers[-1] is True
    flip = answers.index(True)
    assert all(answers[flip:])


def test_nothing_old_or_only_stubs_never_pays() -> None:
    assert not ad.compaction_pays(history(3, 0), keep_last=3)  # none is old yet
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = history(2, 60)
    assert ad.compaction_pays(messages, keep_last=3)
    done = ad.compact(messages, kit=kit, keep_last=3)
    assert len(done.evicted) == 2
    assert not ad.compaction_pays(done.messages, keep_last=3)


def test_a_dear_cache_write_puts_it_off() -> None:
    messages = history(2, 30)
    assert ad.compaction_pays(messages, keep_last=3)
    assert not ad.compaction_pays(messages, keep_last=3, cache_prices=ad.CachePrices(write=40.0))
    assert not ad.compaction_pays(messages, keep_last=3, cache_prices=ad.CachePrices(read=0.0))


def test_compact_with_cache_prices_acts_under_the_trigger_only_when_it_pays() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    prices = ad.CachePrices()
    young, old = history(2, 2), history(2, 60)
    for messages in (young, old):
        assert ad.message_tokens(messages) < 100_000
        plain = ad.compact(messages, kit=kit, trigger_tokens=100_000)
        assert plain.evicted == []  # under the trigger: nothing, as before
    assert ad.compact(young, kit=kit, trigger_tokens=100_000, cache_prices=prices).evicted == []
    done = ad.compact(old, kit=kit, trigger_tokens=100_000, cache_prices=prices)
    assert [e.call_id for e in done.evicted] == ["c0", "c1"]
    assert done.tokens_after < done.tokens_before // 2
    # without a trigger, prices alone decide
    assert ad.compact(young, kit=kit, cache_prices=prices).evicted == []
    assert len(ad.compact(old, kit=kit, cache_prices=prices).evicted) == 2


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"read": -1}, "CachePrices.read must be finite and 0 or more, not -1"),
        ({"write": "1.25"}, "CachePrices.write must be a number, not '1.25'"),
        ({"write": float("inf")}, "CachePrices.write must be finite and 0 or more, not inf"),
        ({"read": True}, "CachePrices.read must be a number, not True"),
    ],
)
def test_prices_that_make_no_sense_are_refused(given: dict[str, Any], said: str) -> None:
    with pytest.raises(ad.ArgumentError) as caught:
        ad.CachePrices(**given)
    assert str(caught.value) == said


def test_compact_refuses_prices_of_another_kind() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    with pytest.raises(ad.ArgumentError, match=r"cache prices are ad\.CachePrices"):
        ad.compact(history(2, 60), kit=kit, cache_prices={"read": 0.1})  # type: ignore[arg-type]
    with pytest.raises(ad.ArgumentError, match="keep_last must be at least 0"):
        ad.compaction_pays(history(2, 60), keep_last=-1)
    with pytest.raises(ad.ArgumentError, match=f"budget must be at least {ad.MIN_BUDGET}"):
        ad.compaction_pays([], budget=5)  # refused even when nothing is old


def test_the_benchmark_compacts_early_when_it_pays_and_that_costs_less() -> None:
    messages = [*history(6, 60), {"role": "assistant", "content": "done"}]
    s = Session(session_id="s", messages=messages, shape="flat")
    kit = ad.Toolkit(ad.open_store("memory://"))
    trigger = 10 * ad.message_tokens(messages)  # never reached, and far off

    def run(strategy: str, write: float, early: bool = True) -> Any:
        return simulate(
            s,
            strategy,
            trigger=trigger,
            keep=3,
            kit_for=lambda _: kit,
            cache_write=write,
            options=Options(trim=False, early=early),
        )

    waiting = run("none", 1.25).per_turn
    assert run("clear", 1.25, early=False).per_turn == waiting  # under the trigger: it waits
    early, late = run("addressable", 1.25), run("addressable", 1.25, early=False)
    assert late.per_turn == waiting
    assert any(b < a for a, b in zip(early.per_turn, early.per_turn[1:], strict=False))
    assert early.figures.net < late.figures.net
    assert early.figures.cached < late.figures.cached
    assert early.figures.lost == 0
    # the same rule for clear: its placeholders go early too
    assert run("clear", 1.25).figures.cached < run("clear", 1.25, early=False).figures.cached
    # a cache write so dear that acting never pays: each waits
    assert run("addressable", 1000.0).per_turn == waiting
    assert run("clear", 1000.0).per_turn == waiting


def test_an_early_compaction_stubs_every_old_result_whatever_the_target() -> None:
    """The rule priced stubbing them all: one at a time, down to a target, would break
    the cache near the front on every call."""
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = history(6, 40)
    assert ad.compaction_pays(messages, keep_last=3)
    tokens = ad.message_tokens(messages)
    done = ad.compact(
        messages,
        kit=kit,
        keep_last=3,
        trigger_tokens=tokens + 10_000,
        target_tokens=tokens - 100,  # one stub would do
        cache_prices=ad.CachePrices(),
    )
    assert [e.call_id for e in done.evicted] == [f"c{k}" for k in range(6)]
    again = [*done.messages, *turn(99, "ok")]
    assert not ad.compaction_pays(again, keep_last=3)


def under_the_trigger(messages: list[dict[str, Any]], kit: ad.Toolkit, **options: Any) -> Any:
    """`compact` with prices, keep 3, and a trigger far above the list."""
    return ad.compact(
        messages,
        kit=kit,
        keep_last=3,
        trigger_tokens=100_000,
        cache_prices=ad.CachePrices(),
        **options,
    )


def test_results_compact_keeps_do_not_make_it_compact_every_call() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = history(1, 60)  # the one old result worth stubbing...
    assert ad.compaction_pays(messages, keep_last=3)  # ...the list alone cannot know it is pinned
    done = under_the_trigger(messages, kit, trim_to=100, pins=["c0"])
    assert done.evicted == [] and done.cut == [] and done.messages == messages


def test_an_early_compaction_cuts_none_of_the_agents_words() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = history(4, 40)
    trim = ad.compact(messages, kit=kit, keep_last=3, trim_to=200)
    assert trim.cut  # over trim_to once its results are stubs: cut when compacting anyway
    early = under_the_trigger(messages, kit, trim_to=200)
    assert len(early.evicted) == 4 and early.cut == []


PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 9000}}


def screenshots(small: int) -> list[dict[str, Any]]:
    """Two screenshots (an image and a caption), then `small` tiny results (Anthropic)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "look at the screen"}]
    for k in range(2 + small):
        content: Any = [{"type": "text", "text": "screen"}, PNG] if k < 2 else "ok"
        messages += [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"c{k}", "name": "shot", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"c{k}", "content": content}],
            },
        ]
    return messages


def test_old_images_are_counted_as_the_request_counts_them() -> None:
    listing = Listing(screenshots(0))
    image = listing.conversation.results[0]
    assert listing.result_tokens(image) >= IMAGE_TOKENS > ad.count_tokens(image.text)
    answers = [ad.compaction_pays(screenshots(n), keep_last=3) for n in range(1, 60)]
    assert answers[0] is False and answers[-1] is True


@pytest.mark.parametrize("prices", [{"read": 0.1}, 0.1, ad.CachePrices, {}])
def test_compaction_pays_refuses_prices_of_another_kind(prices: Any) -> None:
    with pytest.raises(ad.ArgumentError, match=r"cache prices are ad\.CachePrices"):
        ad.compaction_pays(history(0, 0), cache_prices=prices)


def test_a_price_too_large_for_a_float_is_refused_in_one_line() -> None:
    with pytest.raises(ad.ArgumentError) as caught:
        ad.CachePrices(read=10**400)
    assert str(caught.value).startswith("CachePrices.read must be finite and 0 or more, not ")
    assert "\n" not in str(caught.value)


def test_results_whose_stubs_would_save_nothing_are_not_counted() -> None:
    """Mid-size results compaction leaves whole (their stub would be as long) save
    nothing and write nothing: a fresh page is stubbed alone."""
    mid = [{"role": "user", "content": "task"}]
    for k in range(300):
        mid += turn(k, f"r{k} " + "w " * 60)
    kit = ad.Toolkit(ad.open_store("memory://"))
    assert under_the_trigger(mid, kit).evicted == []  # none of them is worth a stub
    fresh = [*turn(1000, "page\n" + PAGE), *turn(1001, "ok"), *turn(1002, "ok"), *turn(1003, "ok")]
    # 300 requests so far: the page, stubbed now, saves on many to come
    assert [e.call_id for e in under_the_trigger([*mid, *fresh], kit).evicted] == ["c1000"]


def test_the_requests_ahead_stop_at_the_trigger() -> None:
    """Past the trigger the list would be compacted anyway: an early compaction saves
    only on the requests before it, at the pace the list grew."""
    assert ad.compaction.requests_ahead(10, 5_000, None) == 10
    assert ad.compaction.requests_ahead(10, 5_000, 100_000) == 10  # far off: the session's pace
    assert ad.compaction.requests_ahead(10, 5_000, 6_000) == 2  # 500 tokens a request
    assert ad.compaction.requests_ahead(10, 7_000, 6_000) == 0
    messages = history(2, 40)
    tokens = ad.message_tokens(messages)
    assert ad.compaction_pays(messages, keep_last=3)
    assert not ad.compaction_pays(messages, keep_last=3, trigger_tokens=tokens + 50)


def test_deciding_not_to_act_leaves_the_store_alone() -> None:
    """Under the trigger, a list that does not pay is not ingested: the decision reads
    the list, and the store only once it may pay."""
    kit = ad.Toolkit(ad.open_store("memory://"))
    messages = history(6, 2)
    assert not ad.compaction_pays(messages, keep_last=3)
    assert under_the_trigger(messages, kit).evicted == []
    assert list(kit.store.records()) == []
    done = under_the_trigger(history(6, 40), kit)  # once it pays, it ingests and stubs
    assert len(done.evicted) == 6 and len(list(kit.store.records())) >= 6
