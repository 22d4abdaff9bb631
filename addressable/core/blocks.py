"""Tool results with more than text: images, documents, files.

A result whose content holds a part that is not text is stored whole: its content
blocks, as canonical JSON under the media type `BLOCKS`, with the shape of the list
they came from. The stub says what was there beside the text ("1 image (image/png,
34 KB)"); the text form of `replay_result` gives the text (a search result's and a
text document's too) and names the rest; the content form (`handle_content`) gives the
blocks back as the API takes them: the stored blocks exactly when the shape is the
same, images converted between the shapes otherwise.

Images are read in every shape that carries them: Anthropic (`image` with a `source`),
OpenAI Chat (`image_url`), OpenAI Responses (`input_image`), MCP (`image` with `data`
and `mimeType`) and LangChain (`image` with `base64` or `source_type`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .ids import canonical_json

TEXT_TYPES = ("text", "input_text", "output_text")


def non_text(content: Any) -> bool:
    """Whether a result's content (a list of parts) holds a part that is not text."""
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") not in TEXT_TYPES for part in content
    )


def encode_blocks(content: Sequence[Any], shape: str) -> bytes:
    return canonical_json({"content": list(content), "shape": shape}, name="the result's content")


def decode_blocks(payload: bytes) -> tuple[list[Any], str]:
    value = json.loads(payload)
    return list(value["content"]), str(value["shape"])


def blocks_text(content: Sequence[Any]) -> str:
    """The text a content list carries, joined by newlines (what a model reads): its
    text parts, and the text inside its search results and text documents."""
    return "\n".join(text for text in map(part_text, content) if text is not None)


def part_text(part: Any) -> str | None:
    """The text one part of a content list carries, or None for a part without any (an
    image, a PDF). A part is a string, or a block with a `text`; or Anthropic's
    `search_result` (its title, source and text blocks) or `document` (its title,
    context, and its text: a `text` source's data, a `content` source's text blocks),
    None when none of these is text."""
    if isinstance(part, str):
        return part
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type")
    if kind == "search_result":
        lines = [part.get("title"), part.get("source"), _texts(part.get("content"))]
    elif kind == "document":
        source = part.get("source")
        if not isinstance(source, Mapping):
            return None
        if source.get("type") == "text":
            body = source.get("data")
        elif source.get("type") == "content":
            body = _texts(source.get("content"))
        else:
            return None  # a PDF, a file, a URL: no text to read here
        lines = [part.get("title"), part.get("context"), body]
    else:
        text = part.get("text")
        return text if isinstance(text, str) else None
    return "\n".join(line for line in lines if isinstance(line, str) and line) or None


def _texts(content: Any) -> str | None:
    """The text of a block's own content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return None


def describe(content: Sequence[Any], *, textless: bool = False) -> str:
    """What a content list holds beside its text parts, e.g. "1 image (image/png, 34 KB),
    1 search_result"; with `textless`, only the parts whose text `part_text` cannot
    read (a search result's is read)."""
    counted: dict[tuple[str, str], int] = {}
    for part in content:
        if not isinstance(part, Mapping) or part.get("type") in TEXT_TYPES:
            continue
        if textless and part_text(part) is not None:
            continue
        image = image_of(part)
        if image is not None:
            what = ("image", f" ({image[0]}, {_size(len(_decoded(image[1])))})")
        else:
            what = (str(part.get("type", "part")).removeprefix("input_"), "")
        counted[what] = counted.get(what, 0) + 1
    return ", ".join(
        f"{n} {noun}{'' if n == 1 else 's'}{detail}" for (noun, detail), n in counted.items()
    )


def image_of(part: Mapping[str, Any]) -> tuple[str, str] | None:
    """(media type, base64 data) of an image part in any shape, or None."""
    kind = part.get("type")
    source = part.get("source")
    if kind == "image" and isinstance(source, Mapping) and source.get("type") == "base64":
        return str(source.get("media_type", "image/*")), str(source.get("data", ""))
    if kind == "image" and isinstance(part.get("data"), str):  # MCP, LangChain (source_type)
        media_type = part.get("mimeType") or part.get("mime_type") or "image/*"
        return str(media_type), str(part["data"])
    if kind == "image" and isinstance(part.get("base64"), str):  # LangChain's standard block
        return str(part.get("mime_type") or "image/*"), str(part["base64"])
    if kind == "input_image":
        return _data_url(part.get("image_url"))
    if kind == "image_url":
        url = part.get("image_url")
        return _data_url(url.get("url") if isinstance(url, Mapping) else url)
    return None


def to_shape(content: list[Any], stored: str, shape: str) -> list[Any]:
    """The stored blocks as the API of `shape` takes them in a tool result: unchanged
    when it is the shape they were stored from; else text parts and images converted,
    and any other part as it was."""
    if shape == stored:
        return content
    out: list[Any] = []
    for part in content:
        if not isinstance(part, Mapping):
            out.append(part)
            continue
        image = image_of(part)
        if part.get("type") in TEXT_TYPES:
            text_type = "input_text" if shape == "openai-responses" else "text"
            out.append({"type": text_type, "text": part.get("text", "")})
        elif image is not None:
            out.append(_image_block(shape, *image))
        else:
            out.append(dict(part))
    return out


def _image_block(shape: str, media_type: str, data: str) -> dict[str, Any]:
    if shape == "openai-responses":
        return {"type": "input_image", "image_url": f"data:{media_type};base64,{data}"}
    if shape in ("openai", "flat"):
        return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _data_url(url: Any) -> tuple[str, str] | None:
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return head or "image/*", data


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return data.encode()


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} bytes"
    if n < 1_000_000:
        return f"{n / 1000:.0f} KB"
    return f"{n / 1_000_000:.1f} MB"
