"""What a request's tokens are made of: text is counted by the tokenizer; an image's
bytes, a thinking signature, encrypted reasoning and audio are not text. Counted as text,
one screenshot made a conversation of 13,000 tokens read as 156,000, and compaction
evicted results it had no need to."""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest

import addressable as ad
from addressable.context.messages import FILE_CHARS_PER_TOKEN, IMAGE_TOKENS

PNG = base64.b64encode(os.urandom(30_000)).decode()
DATA_URL = f"data:image/png;base64,{PNG}"
ASK = {"type": "text", "text": "Why does this page fail?"}


def words(text: str) -> int:
    return len(text.split())


def tokens(*messages: dict[str, Any]) -> int:
    return ad.message_tokens(list(messages), tokenizer=words)


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(parts)}


IMAGES: dict[str, dict[str, Any]] = {
    "anthropic base64": {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    },
    "chat data url": {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "high"}},
    "responses input_image": {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
    "langchain base64": {"type": "image", "source_type": "base64", "data": PNG},
}


@pytest.mark.parametrize("name", IMAGES)
def test_an_image_counts_a_fixed_estimate_and_its_bytes_are_not_text(name: str) -> None:
    image = IMAGES[name]
    text = ad.message_text(image)  # its media type, its detail: a few words
    assert PNG not in text
    assert len(text) < 40
    assert tokens(user(image, ASK)) == tokens(user(ASK)) + IMAGE_TOKENS + words(text)
    assert "Why does this page fail?" in ad.message_text(user(image, ASK))


def test_an_image_by_url_counts_the_estimate_and_its_url() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://ex.com/a.png"}}
    assert tokens(user(image, ASK)) == tokens(user(ASK)) + IMAGE_TOKENS + 1
    assert "https://ex.com/a.png" in ad.message_text(user(image))


def test_a_screenshot_in_a_computer_call_output_is_one_image() -> None:
    shot = {
        "type": "computer_call_output",
        "call_id": "c1",
        "output": {"type": "computer_screenshot", "image_url": DATA_URL},
    }
    assert tokens(shot) == tokens({**shot, "output": {}}) + IMAGE_TOKENS
    generated = {"type": "image_generation_call", "id": "ig_1", "result": PNG}
    assert tokens(generated) == tokens({"id": "ig_1"}) + IMAGE_TOKENS


def test_an_image_in_a_tool_result_is_counted_once() -> None:
    result = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [IMAGES["anthropic base64"]]}
        ],
    }
    bare = {**result, "content": [{"tool_use_id": "t1", "content": [{"source": {}}]}]}
    assert tokens(result) == tokens(bare) + IMAGE_TOKENS + 1  # its media type, image/png


def test_signatures_encrypted_reasoning_and_audio_count_nothing() -> None:
    blob = base64.b64encode(os.urandom(3000)).decode()
    thinking = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "check the logs", "signature": blob},
            {"type": "redacted_thinking", "data": blob},
            {"type": "text", "text": "done"},
        ],
    }
    bare = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "check the logs"},
            {"type": "text", "text": "done"},
        ],
    }
    assert tokens(thinking) == tokens(bare)
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": blob}
    assert tokens(reasoning) == tokens({"type": "reasoning", "id": "rs_1", "summary": []})
    audio = {"type": "input_audio", "input_audio": {"data": blob, "format": "wav"}}
    assert tokens(user(audio, ASK)) == tokens(user({"type": "input_audio"}, ASK))
    for message in (thinking, reasoning, user(audio)):
        assert blob not in ad.message_text(message)
    assert "check the logs" in ad.message_text(thinking)


def test_a_files_data_counts_by_its_size_and_is_not_text() -> None:
    pdf = base64.b64encode(os.urandom(3000)).decode()  # 4,000 characters
    documents: list[dict[str, Any]] = [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": pdf},
        },
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{pdf}"}},
        {"type": "input_file", "file_data": pdf},
    ]
    for document in documents:
        assert pdf not in ad.message_text(user(document))
        by_size = -(-len(pdf) // FILE_CHARS_PER_TOKEN)
        assert tokens(user(document)) - tokens(user({"type": "document"})) in (
            by_size,
            -(-(len(pdf) + len("data:application/pdf;base64,")) // FILE_CHARS_PER_TOKEN),
            by_size + 1,  # a source's media_type is text
        )


def test_a_documents_text_source_is_text() -> None:
    text = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "a b c"},
    }
    assert "a b c" in ad.message_text(text)
    assert tokens(user(text)) == tokens(user({"type": "document"})) + 4  # text/plain, a b c


def test_a_text_only_list_counts_as_its_text() -> None:
    messages = [
        {"role": "user", "content": "look up json"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"name": "json"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [{"type": "text", "text": "json: a codec"}],
        },
    ]
    texts = ["look up json", 'c1\nlookup\n{"name": "json"}', "c1\njson: a codec"]
    assert [ad.message_text(m) for m in messages] == texts
    assert ad.message_tokens(messages) == sum(3 + ad.count_tokens(t) for t in texts)


def test_a_screenshot_does_not_make_compaction_evict() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))

    @kit.tool(determinism="nondeterministic")
    def lookup(name: str) -> str:
        """Describe a module."""
        return "\n".join(f"{name} line {i}: the module {name} does thing {i}" for i in range(60))

    screenshot = base64.b64encode(os.urandom(150_000)).decode()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": screenshot},
    }
    messages: list[dict[str, Any]] = [user(image, ASK)]
    for k in range(8):
        call = {"type": "tool_use", "id": f"t{k}", "name": "lookup", "input": {"name": f"m{k}"}}
        messages.append({"role": "assistant", "content": [call]})
        result = kit.handle("lookup", {"name": f"m{k}"})
        messages.append(user({"type": "tool_result", "tool_use_id": f"t{k}", "content": result}))
    compacted = ad.compact(messages, kit=kit, keep_last=2, trigger_tokens=100_000)
    assert compacted.tokens_before < 20_000
    assert compacted.evicted == []


def test_target_tokens_counts_what_an_evicted_result_held_besides_text() -> None:
    # Each result: about 1,600 tokens of text and an image (1,600 more). Evicting one
    # frees both, so two evictions reach a mark 4,000 under the total, not three.
    kit = ad.Toolkit(ad.open_store("memory://"))
    png = base64.b64encode(bytes(range(256)) * 12).decode()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "look at these"}]
    for i in range(4):
        call = {"type": "tool_use", "id": f"t{i}", "name": "shot", "input": {"n": i}}
        words = {"type": "text", "text": " ".join(f"w{i}x{j}" for j in range(400))}
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": png},
        }
        answer = {"type": "tool_result", "tool_use_id": f"t{i}", "content": [words, image]}
        messages += [
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [answer]},
        ]
    total = ad.message_tokens(messages)
    done = ad.compact(messages, kit=kit, keep_last=0, trigger_tokens=0, target_tokens=total - 4000)
    assert len(done.evicted) == 2 and done.tokens_after <= total - 4000


def test_a_tool_result_that_is_not_utf8_text_is_malformed() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    body = "x " * 100
    for content in (body + "\ud800", [{"type": "text", "text": body}, "\ud800"]):
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": content}],
            },
        ]
        with pytest.raises(
            ad.MalformedMessages, match="message 2: tool result for 't1': not UTF-8"
        ):
            ad.compact(messages, kit=kit, keep_last=0)
