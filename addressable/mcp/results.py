"""What `serve` and `proxy` share: stored results as MCP resources
(`addressable://result/ID`), the link each tool result carries, and the library's
errors as MCP errors, one line each (never "Internal server error")."""

from __future__ import annotations

import base64
from typing import Any

from ..core.errors import AddressableError, AmbiguousId, BadId, Expired, IntegrityError, NotFound
from ..core.ids import quoted
from ..core.payload import payload_text
from ..core.records import Record
from ..kit import Toolkit
from ..recording.recorder import model_resolve
from .content import is_upstream, resource_contents
from .sdk import MCPError, Server, ServerRequestContext, types

SCHEME = "addressable://result/"
TEMPLATE = SCHEME + "{id}"
LISTED = 200  # resources/list gives the newest this many records of the session


def uri_of(record_id: str) -> str:
    return SCHEME + record_id


def link(record: Record) -> types.ResourceLink:
    """The resource link a tool result carries to its stored record."""
    return types.ResourceLink(
        type="resource_link",
        uri=uri_of(record.id),
        name=f"result {record.id}",
        description=(
            f"the stored result of {record.tool}: resources/read gives it exactly, "
            f'as does replay_result(id="{record.id}")'
        ),
        mime_type=record.media_type,
        size=record.size,
    )


def mcp_error(exc: AddressableError) -> MCPError:
    """The library's error as an MCP error: invalid params for a bad, unknown, expired
    or ambiguous id, internal error otherwise; the message is the library's one line."""
    known = (BadId, AmbiguousId, NotFound, Expired, IntegrityError)
    code = types.INVALID_PARAMS if isinstance(exc, known) else types.INTERNAL_ERROR
    return MCPError(code=code, message=" ".join(str(exc).split()) or type(exc).__name__)


def read(kit: Toolkit, uri: str) -> types.ReadResourceResult:
    """The exact stored content an `addressable://result/ID` URI names (an id, or a
    prefix by `replay_result`'s rule: of a record the kit's session has seen, or one a
    stub showed): an upstream's result as its content blocks (see `resource_contents`),
    any other as text when the payload is UTF-8 text, else base64, with its media
    type."""
    if not uri.startswith(SCHEME) or uri == SCHEME:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"unknown resource {quoted(uri)}: stored results are {TEMPLATE}",
        )
    try:
        result = kit.replay(model_resolve(kit.store, kit.session, uri.removeprefix(SCHEME)))
    except AddressableError as exc:
        raise mcp_error(exc) from exc
    record, payload = result.record, result.payload
    if is_upstream(record):
        try:
            found = resource_contents(uri, record, payload)
        except (ValueError, KeyError, TypeError):  # a record made elsewhere: its bytes
            found = []
        if found:
            return types.ReadResourceResult(contents=found, ttl_ms=86_400_000)
    contents: types.TextResourceContents | types.BlobResourceContents
    text = payload_text(payload, record.media_type)
    if text is not None:
        contents = types.TextResourceContents(uri=uri, mime_type=record.media_type, text=text)
    else:
        blob = base64.b64encode(payload).decode("ascii")
        contents = types.BlobResourceContents(uri=uri, mime_type=record.media_type, blob=blob)
    # A stored result never changes: a client may keep it.
    return types.ReadResourceResult(contents=[contents], ttl_ms=86_400_000)


def resource(record: Record) -> types.Resource:
    return types.Resource(
        uri=uri_of(record.id),
        name=f"result {record.id}",
        title=f"{record.tool} {record.key or ''}".strip(),
        description=f"{record.determinism.value}, {record.status.value}, {record.observed_at}",
        mime_type=record.media_type,
        size=record.size,
    )


def install(server: Server[Any], kit: Toolkit) -> None:
    """Serve the kit's store as resources: a template, a listing of the newest records
    of the kit's session, and reads."""

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # The session's own: a listing hands out whole ids, which reach any record. One
        # that cannot be read is left out (`verify` names it; a read of it says why).
        try:
            records = kit.store.records(
                session=kit.session, newest_first=True, limit=LISTED, damaged=[]
            )
            return types.ListResourcesResult(resources=[resource(r) for r in records])
        except AddressableError as exc:
            raise mcp_error(exc) from exc

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            name="result",
            uri_template=TEMPLATE,
            description="a stored tool result, by its id or a unique prefix of it (6+ hex)",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return read(kit, params.uri)

    server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    server.add_request_handler(
        "resources/templates/list", types.PaginatedRequestParams, list_templates
    )
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
