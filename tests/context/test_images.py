"""Nothing in a result is dropped: images and other parts that are not text are stored
with the result, the stub says what was there, and replay gives them back as blocks."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from pydantic import TypeAdapter

import addressable as ad

PNG = b"\x89PNG\r\n\x1a\n" + hashlib.sha256(b"seed").digest() * 1062  # 34 KB
PNG_B64 = base64.b64encode(PNG).decode()
CAPTION = "\n".join(f"Screenshot of page {n}: the header, the menu and the form." for n in range(8))


def anthropic_list(with_image: dict[str, Any]) -> list[dict[str, Any]]:
    """A screenshot's result with its image, then a later call and its result."""
    return [
        {"role": "user", "content": "Check the page."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {"n": 1}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": CAPTION}, with_image],
                }
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_2", "name": "shot", "input": {"n": 2}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "no change"}],
        },
    ]


ANTHROPIC_IMAGE = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
}


def test_an_anthropic_image_survives_eviction_and_replay(kit: ad.Toolkit) -> None:
    from anthropic.types import ToolResultBlockParam

    messages = anthropic_list(ANTHROPIC_IMAGE)
    result = ad.compact(messages, kit=kit, keep_last=1)

    assert [e.call_id for e in result.evicted] == ["toolu_1"]
    content = result.messages[2]["content"][0]["content"]
    assert len(content) == 1 and content[0]["type"] == "text"  # the image left the context
    stub = content[0]["text"]
    assert ad.parse_stub(stub) is not None
    assert "1 image (image/png, 34 KB)" in stub
    short = ad.parse_stub(stub)[1]  # type: ignore[index]

    # As text (what a model reads): the caption, and what was beside it.
    text = kit.handle("replay_result", {"id": short})
    assert text.startswith(CAPTION)
    assert "1 image (image/png, 34 KB)" in text
    assert PNG_B64 not in text

    # As content: the blocks exactly as they were, the image byte for byte.
    blocks = ad.handle_content(kit, "replay_result", f'{{"id": "{short}"}}', "anthropic")
    assert blocks == messages[2]["content"][0]["content"]
    assert isinstance(blocks, list)
    assert base64.b64decode(blocks[1]["source"]["data"]) == PNG
    TypeAdapter(ToolResultBlockParam).validate_python(
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": blocks}
    )

    # Compacting again gives the same list and points at the same record.
    again = ad.compact(result.messages, kit=kit, keep_last=1)
    assert again.messages == result.messages
    assert ad.compact(messages, kit=kit, keep_last=1).messages == result.messages


def test_an_openai_responses_image_comes_back_in_either_shape(kit: ad.Toolkit) -> None:
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"}
    output = [{"type": "input_text", "text": CAPTION}, image]
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "Check the page."},
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": '{"n": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    ]
    result = ad.compact(items, kit=kit, keep_last=0)

    assert [e.call_id for e in result.evicted] == ["c1"]
    stub = result.messages[2]["output"][0]["text"]
    assert "1 image (image/png, 34 KB)" in stub
    short = ad.parse_stub(stub)[1]  # type: ignore[index]
    assert ad.handle_content(kit, "replay_result", {"id": short}, "openai-responses") == output
    converted = ad.handle_content(kit, "replay_result", {"id": short}, "anthropic")
    assert converted == [{"type": "text", "text": CAPTION}, ANTHROPIC_IMAGE]
    # A Chat Completions tool message takes text only.
    assert ad.handle_content(kit, "replay_result", {"id": short}, "openai") == kit.handle(
        "replay_result", {"id": short}
    )


def test_mcp_images_and_other_parts_are_named_in_the_stub(kit: ad.Toolkit) -> None:
    jpeg = base64.b64encode(b"\xff\xd8\xff" + b"j" * 2500).decode()
    content = [
        {"type": "text", "text": CAPTION},
        {"type": "image", "data": jpeg, "mimeType": "image/jpeg"},
        {"type": "image", "data": jpeg, "mimeType": "image/jpeg"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "a"}},
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Look."},
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "shot", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "c1", "content": content},
    ]
    result = ad.compact(messages, kit=kit, keep_last=0)
    stub = result.messages[2]["content"][0]["text"]
    assert "2 images (image/jpeg, 3 KB), 1 resource" in stub
    short = ad.parse_stub(stub)[1]  # type: ignore[index]
    assert ad.handle_content(kit, "replay_result", {"id": short}, "flat") == content
    as_anthropic = ad.handle_content(kit, "replay_result", {"id": short}, "anthropic")
    assert isinstance(as_anthropic, list)
    assert as_anthropic[1]["source"] == {"type": "base64", "media_type": "image/jpeg", "data": jpeg}


def test_an_image_only_result_is_evicted_though_its_text_is_short(kit: ad.Toolkit) -> None:
    messages = anthropic_list(ANTHROPIC_IMAGE)
    messages[2]["content"][0]["content"] = [ANTHROPIC_IMAGE]
    result = ad.compact(messages, kit=kit, keep_last=1)
    assert [e.call_id for e in result.evicted] == ["toolu_1"]
    short = ad.parse_stub(result.messages[2]["content"][0]["content"][0]["text"])[1]  # type: ignore[index]
    assert ad.handle_content(kit, "replay_result", {"id": short}) == [ANTHROPIC_IMAGE]


def test_other_tools_and_bad_arguments_go_through_handle(kit: ad.Toolkit) -> None:
    assert ad.handle_content(kit, "replay_result", "{not json") == kit.handle(
        "replay_result", "{not json"
    )
    assert ad.handle_content(kit, "nope", {}) == kit.handle("nope", {})


@pytest.fixture
def kit(disk_kit: ad.Toolkit) -> ad.Toolkit:
    return disk_kit


def test_a_failed_result_of_an_image_and_blank_text_is_recorded_as_an_error() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 2000).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    block = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "is_error": True,
        "content": [{"type": "text", "text": "   "}, image],
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}],
        },
        {"role": "user", "content": [block]},
        {"role": "assistant", "content": "ok"},
    ]
    done = ad.compact(messages, kit=kit, keep_last=0)
    assert len(done.evicted) == 1
    (record,) = kit.store.records()
    assert record.status is ad.Status.ERROR and record.error == "error"
