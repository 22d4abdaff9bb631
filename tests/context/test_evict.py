"""evict(): Reference or Claim by the test of the key, a gist within the budget."""

from __future__ import annotations

import json

import pytest

import addressable as ad
from tests.helpers import FakeClock


@pytest.fixture
def kit(clock: FakeClock) -> ad.Toolkit:
    return ad.Toolkit(ad.open_store("memory://"), clock=clock)


PAGE = (
    b"<html><head><title>threading - Thread-based parallelism</title>"
    b"<script>var x = 1;</script></head><body><nav>Home</nav><h1>threading</h1>"
    b"<p>This module constructs higher-level threading interfaces on top of the lower "
    b"level _thread module.</p><p>More text.</p>"
    + b"".join(b"<p>Section %d of the reference, in some detail.</p>" % n for n in range(400))
    + b"</body></html>"
)


def test_a_deterministic_result_is_a_reference(kit: ad.Toolkit) -> None:
    res = kit.record(
        "fetch",
        {"url": "https://d/threading"},
        PAGE,
        determinism="deterministic",
        key="https://d/threading",
        media_type="text/html",
    )
    ref = ad.evict(res.record, store=kit.store, budget=80)
    assert isinstance(ref, ad.Reference)
    assert (ref.id, ref.key, ref.tool) == (res.id, "https://d/threading", "fetch")
    assert ref.tokens == ad.count_tokens(PAGE.decode())
    # The title and the whole first sentence, never a sentence cut short.
    assert ref.gist.startswith(
        '"threading - Thread-based parallelism": This module constructs higher-level '
        "threading interfaces on top of the lower level _thread module."
    )
    assert "var x" not in ref.gist and "…" not in ref.gist


def test_a_nondeterministic_result_is_a_claim(kit: ad.Toolkit) -> None:
    hits = {
        "query": "thread safe",
        "backend": "local",
        "hits": [
            {"title": "threading", "url": "https://d/threading", "snippet": "..."},
            {"title": "queue", "url": "https://d/queue", "snippet": "..."},
        ],
    }
    res = kit.record(
        "search",
        {"query": "thread safe"},
        json.dumps(hits).encode(),
        determinism="nondeterministic",
        media_type="application/json",
    )
    claim = ad.evict(res.record, store=kit.store)
    assert isinstance(claim, ad.Claim)
    assert claim.label == '"thread safe"'
    assert (
        claim.text
        == '"thread safe", 2 hits: threading <https://d/threading>; queue <https://d/queue>'
    )


def test_an_empty_search_is_a_negative_finding(kit: ad.Toolkit) -> None:
    res = kit.record(
        "search",
        {"query": "zeppelin"},
        json.dumps({"query": "zeppelin", "backend": "local", "hits": []}).encode(),
        determinism="nondeterministic",
        media_type="application/json",
    )
    assert ad.evict(res.record, store=kit.store).text == (  # type: ignore[union-attr]
        'no hits for "zeppelin" (local)'
    )


def test_a_search_keeps_its_query_and_first_hits_in_rank_order(kit: ad.Toolkit) -> None:
    hits = [
        {
            "title": f"Result number {n} on locks",
            "url": f"https://docs.example/lib/page{n}.html",
            "snippet": "lorem ipsum dolor sit amet " * 12,
        }
        for n in range(10)
    ]
    res = kit.record(
        "search",
        {"query": "lock order"},
        json.dumps({"query": "lock order", "backend": "web", "hits": hits}).encode(),
        determinism="nondeterministic",
        media_type="application/json",
    )
    for budget in (60, 120):
        text = ad.evict(res.record, store=kit.store, budget=budget).text  # type: ignore[union-attr]
        assert text.startswith('"lock order", 10 hits: ')
        at = [text.index(f"https://docs.example/lib/page{n}.html") for n in range(3)]
        assert at == sorted(at)  # rank order
    # Where there is room, a hit's title goes with its URL.
    assert "Result number 0 on locks <https://docs.example/lib/page0.html>" in text


def test_command_output_keeps_exit_code_paths_and_last_line(kit: ad.Toolkit) -> None:
    out = "\n".join(
        [
            "<returncode>1</returncode>",
            "<output>",
            "src/app/models.py:12: class Invoice(Base):",
            "src/app/views.py:40: def pay_invoice(request):",
            "Traceback ...",
            "ValueError: amount must be positive",
            "</output>",
        ]
    )
    res = kit.record(
        "bash", {"command": "grep -rn Invoice src"}, out.encode(), determinism="nondeterministic"
    )
    claim = ad.evict(res.record, store=kit.store, budget=80)
    assert isinstance(claim, ad.Claim)
    assert claim.text == (
        "exit 1; last: ValueError: amount must be positive; "
        "src/app/models.py:12 src/app/views.py:40; pay_invoice"
    )


def test_json_keeps_identifying_fields_first(kit: ad.Toolkit) -> None:
    body = {
        "name": {"first_name": "Sofia"},
        "reservations": ["OI5L9G", "AQLBTL"],
        "payment_methods": {"gift_card_7091239": {"id": "gift_card_7091239", "amount": 157}},
        "membership": "gold",
    }
    res = kit.record(
        "get_user_details",
        {"user_id": "sofia_kim_7287"},
        json.dumps(body).encode(),
        determinism="nondeterministic",
    )
    # ids and codes are what a later call passes back, first; an amount and a name only
    # where room is left
    tight = ad.evict(res.record, store=kit.store, budget=48)
    assert tight.text == "reservations=OI5L9G,AQLBTL; id=gift_card_7091239"  # type: ignore[union-attr]
    roomy = ad.evict(res.record, store=kit.store, budget=80)
    assert roomy.text == (  # type: ignore[union-attr]
        "reservations=OI5L9G,AQLBTL; id=gift_card_7091239; first_name=Sofia; amount=157"
    )


def test_an_action_says_its_outcome(kit: ad.Toolkit) -> None:
    res = kit.record(
        "api",
        {"method": "PATCH", "url": "https://x/1"},
        b'{"id": "inv_1042"}',
        determinism="side_effect",
        outcome=ad.Outcome.COMPLETED,
    )
    assert ad.evict(res.record, store=kit.store).text.startswith(  # type: ignore[union-attr]
        "completed: id=inv_1042"
    )


@pytest.mark.parametrize("budget", [40, 50, 60, 100])
def test_the_stub_stays_within_its_budget(kit: ad.Toolkit, budget: int) -> None:
    text = "\n".join(f"pkg/mod_{i}/file_{i}.py: def function_number_{i}()" for i in range(200))
    res = kit.record(
        "bash",
        {"command": "grep -rn def " + "x" * 300},
        text.encode(),
        determinism="nondeterministic",
    )
    item = ad.evict(res.record, store=kit.store, budget=budget)
    from addressable.context.stubs import stub_for

    assert ad.count_tokens(stub_for(item, budget)) <= budget


def test_a_summarizer_can_be_plugged_in(kit: ad.Toolkit) -> None:
    res = kit.record("bash", {"command": "ls"}, b"a\nb\n", determinism="nondeterministic")
    seen = []

    def summarize(record: ad.Record, payload: bytes, budget: int) -> str:
        seen.append((record.id, payload, budget))
        return "two files: a and b"

    assert ad.evict(res.record, store=kit.store, summarizer=summarize).text == (  # type: ignore[union-attr]
        "two files: a and b"
    )
    assert seen[0][:2] == (res.id, b"a\nb\n") and 0 < seen[0][2] < 60
