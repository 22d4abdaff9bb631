"""What an MCP client is handed of an upstream's result: the first-sight cap.

A result within the cap goes as it came. One over it (its text, with an image, audio or
blob counted as the estimate counts text: a token for four characters of its base64)
goes as its text's head and tail with what was left out and how `replay_result` reads
the rest; each image, audio or blob as one line naming its media type and the record
that keeps it; its structured content left out, unless the tool declares an output
schema (a client checks the result against it). The record holds it all.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.records import Record
from ..tools.firstsight import binary_part, capped, size_within
from .sdk import types


def sighted(
    result: types.CallToolResult, record: Record, cap: int | None, *, schema: bool
) -> types.CallToolResult:
    """`result` as a client is handed it within `cap` tokens (None: whole); `schema`:
    whether the tool declares an output schema, whose structured content stays."""
    if cap is None:
        return result
    text = "\n".join(_texts(result.content))
    fits, used = size_within(text, cap)
    used += sum(-(-len(_data(block)) // 4) for block in result.content if _binary(block))
    structured = result.structured_content
    if structured is not None and not schema:
        written = json.dumps(structured, ensure_ascii=False)
        if written != text:  # the SDKs write it as the text too: counted once
            fits_too, tokens = size_within(written, cap)
            fits, used = fits and fits_too, used + tokens
    if fits and used <= cap:
        return result
    content: list[Any] = [types.TextContent(type="text", text=capped(text, cap, record.id))]
    for block in result.content:
        if _binary(block):
            size = _decoded_size(_data(block))
            content.append(
                types.TextContent(type="text", text=binary_part(record.id, _mime(block), size))
            )
        elif not _textual(block):  # a resource link: a line, kept as it came
            content.append(block)
    update: dict[str, Any] = {"content": content}
    if not schema:
        update["structured_content"] = None
    return result.model_copy(update=update)


def _decoded_size(data: str) -> int:
    """The bytes a base64 text stands for, its padding taken off (a block is not
    decoded only to be counted)."""
    data = data.rstrip()
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))


def _texts(content: list[Any]) -> list[str]:
    """The text a model reads of the content: text blocks and embedded text resources."""
    found: list[str] = []
    for block in content:
        if isinstance(block, types.TextContent):
            found.append(block.text)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.TextResourceContents
        ):
            found.append(block.resource.text)
    return found


def _textual(block: Any) -> bool:
    return isinstance(block, types.TextContent) or (
        isinstance(block, types.EmbeddedResource)
        and isinstance(block.resource, types.TextResourceContents)
    )


def _binary(block: Any) -> bool:
    return isinstance(block, types.ImageContent | types.AudioContent) or (
        isinstance(block, types.EmbeddedResource)
        and isinstance(block.resource, types.BlobResourceContents)
    )


def _data(block: Any) -> str:
    """The base64 of a binary block."""
    if isinstance(block, types.EmbeddedResource):
        return str(getattr(block.resource, "blob", ""))
    return str(block.data)


def _mime(block: Any) -> str:
    if isinstance(block, types.EmbeddedResource):
        return block.resource.mime_type or "application/octet-stream"
    return str(block.mime_type)
