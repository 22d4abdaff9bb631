"""`compact(trim_to=)`: when stubs alone leave a list too large, the agent's oldest
words are cut to `[…]` and the values they quote from tool results; and small results
go only after an older result goes in the same compaction.

Real kits on diskcache; the lists are the dicts the SDKs send, and LangChain messages.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import addressable as ad

FILLER = "Looking at the traceback, the fault must come from how the value is parsed. " * 12


def result_text(k: int) -> str:
    lines = [
        f"pkg/widget_{k}.py:{n}: def handler_{k}_{n}(value): return parse(value)" for n in range(30)
    ]
    return "\n".join([f"ERR-{k}0042 raised in pkg/widget_{k}.py", *lines])


def chat(turns: int = 6) -> list[dict[str, Any]]:
    """A coding session in the Chat Completions shape: each turn the agent thinks aloud,
    quoting a path from the result before and a name of its own, then reads a file."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the crash in pkg/widget_0.py (ticket TICKET-20260042)"}
    ]
    for k in range(turns):
        said = f"{FILLER} The file pkg/widget_{k}.py and my_own_helper_{k} matter."
        arguments = json.dumps({"command": f"cat pkg/widget_{k}.py"})
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": "shell", "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": said, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": result_text(k)})
        if k == 2:
            messages.append({"role": "user", "content": "Also look at ORDER-55512345, please."})
    return messages


def agent_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "assistant"]


def test_without_trim_to_the_agent_s_words_stay(disk_kit: ad.Toolkit) -> None:
    messages = chat()
    done = ad.compact(messages, kit=disk_kit, keep_last=2)
    assert done.evicted and done.cut == []
    assert agent_texts(done.messages) == agent_texts(messages)


def test_old_words_are_cut_to_the_values_they_quote_from_results(disk_kit: ad.Toolkit) -> None:
    messages = chat()
    plain = ad.compact(messages, kit=disk_kit, keep_last=2)
    done = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=2, trim_to=0)
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    # 0 tokens cannot be reached: the newest results yield too, and only the newest
    # turn stays whole.
    assert done.cut == assistants[:-1]
    for i in done.cut:
        k = assistants.index(i)
        # The path it quoted from a result stays; its own name and its prose go.
        assert done.messages[i]["content"] == f"[…] pkg/widget_{k}.py"
        assert done.messages[i]["tool_calls"] == messages[i]["tool_calls"]
    assert done.messages[assistants[-1]] == messages[assistants[-1]]
    users = [m for m in done.messages if m["role"] == "user"]
    assert users == [m for m in messages if m["role"] == "user"]
    assert done.tokens_after < plain.tokens_after - 4 * 150
    assert done.tokens_after == ad.message_tokens(done.messages)


def test_it_cuts_oldest_first_after_the_first_change_and_stops_once_under(
    disk_kit: ad.Toolkit,
) -> None:
    messages = chat()
    plain = ad.compact(messages, kit=disk_kit, keep_last=2)
    goal = plain.tokens_after - 100  # one cut is enough
    done = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=2, trim_to=goal)
    # The first result becomes a stub (message 2): the cache is broken from there, so
    # the oldest message after it is cut first; message 1 would break it earlier.
    assert done.cut == [3] and done.tokens_after <= goal
    # Under the goal already: nothing is cut.
    under = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=2, trim_to=10**6)
    assert under.cut == [] and agent_texts(under.messages) == agent_texts(messages)


def test_the_newest_results_yield_oldest_first_when_cuts_are_not_enough(
    disk_kit: ad.Toolkit,
) -> None:
    """A list that stubs and cuts leave over `trim_to` would be over it again on every
    turn: the newest results are stubbed too, oldest first, until it is under."""
    messages = chat()
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    plain = ad.compact(messages, kit=disk_kit, keep_last=3)
    first = min(e.index for e in plain.evicted)
    cut = ad.compaction.trim(plain.messages, to=0, keep_last=3, changed_from=first)
    goal = cut.tokens_after - 1  # stubs and cuts come within a token of it
    done = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=3, trim_to=goal)
    assert done.tokens_after <= goal
    assert [e.index for e in done.evicted] == results[:-2]  # one more: the oldest kept
    assert all(done.messages[i] == messages[i] for i in results[-2:])
    # However far over it stays, the newest result is never stubbed.
    far = ad.compact(messages, kit=ad.Toolkit(disk_kit.store), keep_last=3, trim_to=0)
    assert [e.index for e in far.evicted] == results[:-1]
    assert far.messages[results[-1]] == messages[results[-1]]


def talk(turns: int) -> list[dict[str, Any]]:
    """A list with no tool results: nothing to evict, so any cut breaks the cache."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan the migration."}]
    for k in range(turns):
        messages.append({"role": "assistant", "content": f"Step {k}: {FILLER}"})
        messages.append({"role": "user", "content": "Go on."})
    return messages


def test_cutting_before_the_first_change_must_free_a_fifth_of_the_goal(
    disk_kit: ad.Toolkit,
) -> None:
    messages = talk(8)
    size = ad.message_tokens(messages)
    # Over the goal by a little: cutting would free far less than a fifth of it.
    small = ad.compact(messages, kit=disk_kit, keep_last=2, trim_to=size - 50)
    assert small.cut == [] and small.messages == messages
    # Far over: the cuts pay for the cache they break.
    large = ad.compact(messages, kit=disk_kit, keep_last=2, trim_to=size // 3)
    assert len(large.cut) >= 3 and large.tokens_after <= size // 3
    assert all(large.messages[i]["content"] == "[…]" for i in large.cut)


def test_anthropic_text_blocks_are_cut_and_thinking_and_tool_use_stay(
    disk_kit: ad.Toolkit,
) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix pkg/widget_0.py"}]
    for k in range(4):
        thinking = {"type": "thinking", "thinking": FILLER, "signature": "sig"}
        text = {"type": "text", "text": f"{FILLER} See pkg/widget_{k}.py."}
        use = {"type": "tool_use", "id": f"t{k}", "name": "shell", "input": {"command": "ls"}}
        messages.append({"role": "assistant", "content": [thinking, text, use]})
        answer = {"type": "tool_result", "tool_use_id": f"t{k}", "content": result_text(k)}
        messages.append({"role": "user", "content": [answer]})
    done = ad.compact(messages, kit=disk_kit, keep_last=1, trim_to=0)
    assert done.cut == [1, 3, 5]
    for k, i in enumerate(done.cut):
        thinking, text, use = done.messages[i]["content"]
        assert thinking == messages[i]["content"][0] and use == messages[i]["content"][2]
        assert text == {"type": "text", "text": f"[…] pkg/widget_{k}.py"}
    assert done.messages[7] == messages[7]


def test_a_langchain_list_comes_back_as_langchain_messages(disk_kit: ad.Toolkit) -> None:
    messages: list[Any] = [HumanMessage("Fix pkg/widget_0.py", id="h")]
    for k in range(4):
        call = {"id": f"c{k}", "name": "shell", "args": {"command": "ls"}}
        messages.append(AIMessage(f"{FILLER} pkg/widget_{k}.py", tool_calls=[call], id=f"a{k}"))
        messages.append(ToolMessage(result_text(k), tool_call_id=f"c{k}", id=f"r{k}"))
    done = ad.compact(messages, kit=disk_kit, keep_last=1, trim_to=0)
    assert done.cut == [1, 3, 5]
    first = done.messages[1]
    assert isinstance(first, AIMessage) and first.id == "a0"
    assert first.content == "[…] pkg/widget_0.py" and first.tool_calls == messages[1].tool_calls


@pytest.mark.parametrize("bad", [-1, 1.5, "100", True])
def test_a_bad_trim_to_is_refused(disk_kit: ad.Toolkit, bad: object) -> None:
    with pytest.raises(ad.ArgumentError, match="trim_to"):
        ad.compact(chat(), kit=disk_kit, trim_to=bad)  # type: ignore[arg-type]


# -- small results ------------------------------------------------------------------------


def small_and_large(order: str) -> list[dict[str, Any]]:
    """Turns whose results are small (s, a few tokens) or large (L), in `order`, then
    two more turns that keep_last=2 keeps."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Check the build."}]
    for k, size in enumerate(order + "LL"):
        text = "\n".join("abcdefghijklmn") if size == "s" else result_text(k)
        arguments = json.dumps({"command": f"make target_{k}"})
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": "shell", "arguments": arguments},
        }
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": text})
    return messages


def evicted_calls(done: ad.Compaction) -> list[str]:
    return [e.call_id for e in done.evicted]


def test_a_small_result_stays_when_nothing_older_goes(disk_kit: ad.Toolkit) -> None:
    done = ad.compact(small_and_large("ss"), kit=disk_kit, keep_last=2)
    assert evicted_calls(done) == []


def test_a_small_result_goes_after_an_older_one_that_goes(disk_kit: ad.Toolkit) -> None:
    """The cache is broken from the first stub on: a small result after it goes too; one
    before it stays, so the request's cached prefix stays as long as it can."""
    done = ad.compact(small_and_large("sLs"), kit=disk_kit, keep_last=2)
    assert evicted_calls(done) == ["c1", "c2"]
    assert done.messages[6]["content"].startswith("[claim:")
    assert done.messages[2]["content"] == "\n".join("abcdefghijklmn")


def test_a_cut_message_keeps_the_short_ids_it_quoted(disk_kit: ad.Toolkit) -> None:
    """A stub leaves out what the agent's words show, however short: the cut keeps such
    words (a digit, `_`, `.`, CamelCase), not only long ones."""
    messages = chat()
    messages[1]["content"] += " The user usr_771 hit BadSpec in test_rd."
    messages[2]["content"] += "\nusr_771 BadSpec test_rd"
    done = ad.compact(messages, kit=disk_kit, keep_last=2, trim_to=0)
    assert 1 in done.cut
    assert done.messages[1]["content"] == "[…] pkg/widget_0.py usr_771 BadSpec test_rd"


def test_results_are_stubbed_to_trim_to_before_any_word_is_cut(disk_kit: ad.Toolkit) -> None:
    messages = chat(8)
    whole = ad.message_tokens(messages)
    plain = ad.compact(messages, kit=disk_kit, keep_last=2)
    trim_to = plain.tokens_after - 50  # stubs alone come close: one cut will do
    done = ad.compact(
        messages,
        kit=ad.Toolkit(disk_kit.store),
        keep_last=2,
        target_tokens=whole - 100,
        trim_to=trim_to,
    )
    assert len(done.evicted) == len(plain.evicted)  # every result that may go went first
    assert len(done.cut) == 1 and done.tokens_after <= trim_to


def test_responses_annotations_go_with_the_text_they_pointed_into(disk_kit: ad.Toolkit) -> None:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Fix pkg/widget_0.py"}]
    for k in range(3):
        citation = {"type": "url_citation", "start_index": 300, "end_index": 320, "url": "u"}
        part = {"type": "output_text", "text": FILLER, "annotations": [citation]}
        items.append({"type": "message", "role": "assistant", "content": [part]})
        arguments = json.dumps({"command": "ls"})
        items.append(
            {"type": "function_call", "call_id": f"f{k}", "name": "shell", "arguments": arguments}
        )
        items.append({"type": "function_call_output", "call_id": f"f{k}", "output": result_text(k)})
    done = ad.compact(items, kit=disk_kit, keep_last=1, trim_to=0)
    assert done.cut == [1, 4]
    for i in done.cut:
        (part,) = done.messages[i]["content"]
        assert part == {"type": "output_text", "text": "[…]", "annotations": []}
    assert done.messages[7] == items[7]


def test_cuts_before_the_first_change_start_nearest_it(disk_kit: ad.Toolkit) -> None:
    """The cache is read up to the first byte that changed: cutting from the newest old
    message back keeps the longest prefix of the last request."""
    messages = talk(8)
    size = ad.message_tokens(messages)
    done = ad.compact(messages, kit=disk_kit, keep_last=2, trim_to=size // 2)
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    old = assistants[:-2]
    assert 0 < len(done.cut) < len(old)
    # The cut messages are the newest of the old ones: those before them are untouched.
    assert done.cut == old[-len(done.cut) :]
    assert done.messages[: done.cut[0]] == messages[: done.cut[0]]


def test_small_results_are_not_stored_while_they_stay(disk_kit: ad.Toolkit) -> None:
    ad.compact(small_and_large("ss"), kit=disk_kit, keep_last=2)
    assert list(disk_kit.store.records()) == []  # nothing went: nothing was ingested
