"""An upstream's result as the proxy keeps it: its content as the payload, the envelope
beside it in the record's meta, and both back as a `CallToolResult`; and a stored
result as MCP resource contents.

The payload is what the upstream said: a result of one text block is that text
(`text/plain`), so that `replay` and `show --raw` print it, its structured content
rebuilt from it where it is that text as JSON or wrapped as the SDKs wrap a str (meta
`structured` says which); any other is its content
blocks as MCP writes them, under the media type of stored blocks (shape "mcp"), with
its structured content beside them (`structured`). The envelope (`isError`, `_meta`)
is the record's `meta.envelope`: it takes no part in the id, so the same content gets
the same id whatever an upstream writes in `_meta`.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.credentials import redact_urls
from ..core.ids import canonical_json
from ..core.payload import BLOCKS, TEXT
from ..core.records import Record
from .sdk import types

KIND = "content"  # meta.mcp of a record whose payload is an upstream result's content
SHAPE = "mcp"
ENVELOPE = "envelope"  # the meta key of what the result said beside its content
# The meta key saying how a text result's structured content follows from its text: "json"
# (it is the text, read as JSON) or "result" ({"result": text}, as the SDKs wrap a str).
STRUCTURED = "structured"
# The `_meta` key that marks resource contents as an upstream's words, not the proxy's.
ORIGIN = "dev.addressable/origin"


def stored(result: types.CallToolResult) -> tuple[bytes, str, dict[str, Any]]:
    """The payload, media type and meta of an upstream's result, the credentials written
    in its URLs redacted as the arguments are (an upstream's error or echo quotes the
    arguments it was given)."""
    data = redact_urls(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    content = data.get("content", [])
    structured = data.get("structuredContent")
    envelope = {k: v for k, v in data.items() if k not in ("content", "structuredContent")}
    meta: dict[str, Any] = {"mcp": KIND, ENVELOPE: envelope}
    if len(content) == 1 and content[0].get("type") == "text":
        text = str(content[0]["text"])
        derived = _derived(text, structured)
        if structured is None or derived is not None:
            if derived is not None:
                meta[STRUCTURED] = derived
            return text.encode("utf-8"), TEXT, meta
    value: dict[str, Any] = {"content": content, "shape": SHAPE}
    if structured is not None:
        value["structured"] = structured
    return canonical_json(value, name="the upstream's result"), BLOCKS, meta


def is_upstream(record: Record) -> bool:
    """Whether `record` holds an upstream's result, stored by the proxy."""
    return record.meta.get("mcp") == KIND


def original(record: Record, payload: bytes) -> types.CallToolResult:
    """The upstream's result a record keeps, as it came (but for redacted credentials).
    A payload that is not what its meta says raises `ValueError`."""
    envelope = record.meta.get(ENVELOPE)
    data: dict[str, Any] = dict(envelope) if isinstance(envelope, dict) else {}
    if record.media_type == BLOCKS:
        blocks = json.loads(payload)
        data["content"] = blocks["content"]
        if "structured" in blocks:
            data["structuredContent"] = blocks["structured"]
    else:
        text = payload.decode("utf-8")
        data["content"] = [{"type": "text", "text": text}]
        derived = record.meta.get(STRUCTURED)
        if derived == "json":
            data["structuredContent"] = json.loads(text)
        elif derived == "result":
            data["structuredContent"] = {"result": text}
    return types.CallToolResult.model_validate(data)


def _derived(text: str, structured: Any) -> str | None:
    """How `structured` follows from `text`, if it does (see `STRUCTURED`)."""
    if structured is None:
        return None
    if structured == {"result": text}:
        return "result"
    try:
        return "json" if json.loads(text) == structured else None
    except (ValueError, RecursionError):
        return None


def resource_contents(
    uri: str, record: Record, payload: bytes
) -> list[types.TextResourceContents | types.BlobResourceContents]:
    """What `resources/read` gives of an upstream's result: each block as content of its
    own (text as text, an image or audio as a blob with its media type, an embedded
    resource as itself), then the structured content as JSON; each marked as the
    upstream's (`_meta` ORIGIN), so that a client does not take it for the proxy's."""
    result = original(record, payload)
    mark = {ORIGIN: "upstream"}
    derived = record.meta.get(STRUCTURED)  # then the text is the structured content
    kind = "application/json" if derived == "json" else "text/plain"
    found: list[types.TextResourceContents | types.BlobResourceContents] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            found.append(
                types.TextResourceContents(uri=uri, mime_type=kind, text=block.text, _meta=mark)
            )
        elif isinstance(block, types.ImageContent | types.AudioContent):
            found.append(
                types.BlobResourceContents(
                    uri=uri, mime_type=block.mime_type, blob=block.data, _meta=mark
                )
            )
        elif isinstance(block, types.EmbeddedResource):
            # Its own URI is the upstream's: it is served under the record's, marked.
            found.append(block.resource.model_copy(update={"uri": uri, "meta": mark}))
        else:  # a link: what it names, as JSON
            written = block.model_dump_json(by_alias=True, exclude_none=True)
            found.append(
                types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=written, _meta=mark
                )
            )
    if result.structured_content is not None and derived is None:
        written = json.dumps(result.structured_content, ensure_ascii=False)
        found.append(
            types.TextResourceContents(
                uri=uri, mime_type="application/json", text=written, _meta=mark
            )
        )
    return found
