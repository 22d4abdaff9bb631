"""The record a stub points to is the call's own, and an Action whose effect is not
known stays in sight: when two calls showed the same text (the kit remembers the last
one for a text), and when the Action is found in a message list the kit did not make."""

from __future__ import annotations

import json
from typing import Any

import addressable as ad

WORDS = " ".join(f"word{i}" for i in range(60))
PAD = "\n".join(f"pad row {i} " + "x" * 40 for i in range(40))


def chat(kit: ad.Toolkit, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """An OpenAI Chat Completions list: each call, and what kit.handle gave for it."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, (name, args) in enumerate(calls):
        call = {"id": f"c{n}", "type": "function"}
        call["function"] = {"name": name, "arguments": json.dumps(args)}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"c{n}", "content": kit.handle(name, args)}
        )
    return messages


def timing_out(kit: ad.Toolkit) -> None:
    """A transfer and a lookup that fail with the same long message; a padding read."""

    @kit.tool(determinism="side_effect")
    def transfer(amount: int) -> str:
        raise TimeoutError(f"upstream timed out after sending; {WORDS}")

    @kit.tool(determinism="nondeterministic")
    def lookup(q: str) -> str:
        raise TimeoutError(f"upstream timed out after sending; {WORDS}")

    @kit.tool(determinism="nondeterministic")
    def pad(q: str) -> str:
        return f"{q}\n{PAD}"


def own_records(kit: ad.Toolkit, messages: list[dict[str, Any]], done: ad.Compaction) -> None:
    """Every stub points to a record of the call it stands for."""
    calls = {
        c["id"]: c["function"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]
    }
    for evicted in done.evicted:
        record = kit.get(evicted.id)
        call = calls[evicted.call_id]
        assert record.tool == call["name"]
        assert record.args == json.loads(call["arguments"])


def test_an_unknown_transfer_stays_when_a_read_showed_the_same_error(kit: ad.Toolkit) -> None:
    timing_out(kit)
    messages = chat(kit, [("transfer", {"amount": 5}), ("lookup", {"q": "a"}), ("pad", {"q": "1"})])
    assert messages[2]["content"] == messages[4]["content"]  # the same text, twice
    transfer = next(r for r in kit.store.records(tool="transfer"))
    assert kit.outcome(transfer.id) is ad.Outcome.UNKNOWN

    done = ad.compact(messages, kit=kit, keep_last=1)

    assert "c0" not in {e.call_id for e in done.evicted}
    assert done.messages[2]["content"] == messages[2]["content"]  # whole, as it was shown
    assert "c1" in {e.call_id for e in done.evicted}
    own_records(kit, messages, done)


def test_a_read_that_showed_an_unknown_actions_text_stays_too(kit: ad.Toolkit) -> None:
    # The lookup first, then the transfer: the text is remembered for the transfer.
    timing_out(kit)
    messages = chat(kit, [("lookup", {"q": "a"}), ("transfer", {"amount": 5}), ("pad", {"q": "1"})])

    done = ad.compact(messages, kit=kit, keep_last=1)

    assert {e.call_id for e in done.evicted} == set()
    assert done.messages == messages


def test_two_reads_that_showed_the_same_text_point_to_their_own_records(
    kit: ad.Toolkit,
) -> None:
    @kit.tool(determinism="nondeterministic")
    def stock(item: str) -> str:
        return "out of stock at every warehouse; " + WORDS

    @kit.tool(determinism="nondeterministic")
    def pad(q: str) -> str:
        return f"{q}\n{PAD}"

    calls = [("stock", {"item": "a"}), ("stock", {"item": "b"}), ("pad", {"q": "1"})]
    messages = chat(kit, calls)

    done = ad.compact(messages, kit=kit, keep_last=1)

    assert {e.call_id for e in done.evicted} >= {"c0", "c1"}
    assert done.evicted[0].id != done.evicted[1].id
    own_records(kit, messages, done)


def transfers(count: int) -> list[dict[str, Any]]:
    """A list a harness made: transfers it ran itself, each answered at length."""
    said = "transfer accepted, reference TX-99812, " + " ".join(f"w{i}" for i in range(80))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "pay"}]
    for n in range(count):
        call = {"id": f"c{n}", "type": "function"}
        call["function"] = {"name": "transfer", "arguments": json.dumps({"amount": n})}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"{said} {n}"})
    return messages


def test_a_side_effect_found_in_a_list_is_one_unknown_action(kit: ad.Toolkit) -> None:
    messages = transfers(3)
    side_effect = {"transfer": ad.Determinism.SIDE_EFFECT}
    counts = []
    for _ in range(3):
        done = ad.compact(messages, kit=kit, keep_last=1, determinism_of=side_effect)
        assert done.evicted == []  # what they did is not known: they stay in sight
        counts.append(len(list(kit.store.records())))
    assert counts == [2, 2, 2]  # compacting again finds the records it made
    actions = list(kit.store.records(tool="transfer"))
    assert [kit.outcome(a.id) for a in actions] == [ad.Outcome.UNKNOWN] * 2
    state = kit.state(task=ad.Task(text="pay", items=["x"]))
    assert {a.id: a.outcome for a in state.actions} == {a.id: ad.Outcome.UNKNOWN for a in actions}


def test_ingesting_an_action_again_finds_it(kit: ad.Toolkit) -> None:
    first = kit.ingest("c1", "transfer", {"amount": 1}, "sent", determinism="side_effect")
    again = kit.ingest("c1", "transfer", {"amount": 1}, "sent", determinism="side_effect")
    other = kit.ingest("c1", "transfer", {"amount": 2}, "sent", determinism="side_effect")
    assert again.record == first.record
    assert other.record.id != first.record.id  # another call under the same id: its own
    assert first.record.outcome is ad.Outcome.UNKNOWN
    assert len(list(kit.store.records())) == 2


def test_an_action_with_an_image_found_in_a_list_is_one_unknown_action(
    kit: ad.Toolkit,
) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    image["source"]["data"] = "iVBORw0KGgo" + "A" * 4000  # type: ignore[index]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Submit the form."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "submit", "input": {"n": 1}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "submitted; " + WORDS}, image],
                }
            ],
        },
    ]
    side_effect = {"submit": ad.Determinism.SIDE_EFFECT}
    for _ in range(3):
        done = ad.compact(messages, kit=kit, keep_last=0, determinism_of=side_effect)
        assert done.evicted == []
    (action,) = kit.store.records()
    assert action.determinism is ad.Determinism.SIDE_EFFECT
    assert kit.outcome(action.id) is ad.Outcome.UNKNOWN
