"""`addressable mcp proxy`: stand in front of an upstream MCP server, record each of its
results and return it with a link to the record beside the original content.

The upstream is a `Client` on the proxy's own event loop, and its calls are awaited
there; the store is written from a worker thread. A result is stored whole: its content
as the payload and its envelope beside it (see `content`), so that text, images and
structured content come back exactly. A call that fails upstream, times out or loses
its upstream is recorded and returned as an error. What it refuses and why:
docs/security.md, "The MCP proxy".
"""

from __future__ import annotations

import contextlib
import functools
import re
from typing import Any

import anyio
import anyio.to_thread
from pydantic import ValidationError

from ..core.blocks import describe
from ..core.credentials import redact_urls
from ..core.errors import AddressableError, ArgumentError, DeadlineExceeded
from ..core.ids import canonical_args, quoted
from ..core.records import Determinism, Outcome, Record, Status
from ..kit import RecordOptions, Toolkit, failed
from ..recording.argerrors import one_line
from ..tools.registry import failure_text, refused_text
from ..tools.replay import DESCRIPTION as REPLAY_DESCRIPTION
from ..tools.replay import NAME as REPLAY
from ..tools.replay import SCHEMA as REPLAY_SCHEMA
from ..tools.replay import ReplayTool, select
from . import content, results
from .config import McpConfig
from .content import is_upstream, original
from .sdk import (
    Client,
    MCPError,
    Server,
    ServerRequestContext,
    types,
)
from .sight import sighted
from .upstream import Upstream

MAX_TOOL_PAGES = 1000  # pages of an upstream's list of tools read, at most


class UpstreamGone(ConnectionError):
    """The upstream server's connection closed (it exited or crashed)."""


class CallCancelled(Exception):
    """A call stopped before the upstream answered: the client cancelled it, or the
    proxy was shutting down."""


class UpstreamError(Exception):
    """A call's failure as recorded when its text quoted a credential in a URL (the
    upstream's error quoting the arguments): the text with those redacted."""


class Proxy:
    """The upstream's tools, each call recorded in `kit`, plus `replay_result`."""

    def __init__(self, kit: Toolkit, config: McpConfig, upstream: Upstream) -> None:
        self.kit = kit
        self.config = config
        self.upstream = upstream
        self.tools: dict[str, types.Tool] = {}
        self.gone: str | None = None  # why the upstream is unusable, once it is
        self.failed_starts = 0  # starts again in a row that failed
        self._reviving = anyio.Lock()

    @property
    def client(self) -> Client:
        client: Client = self.upstream.current()
        return client

    async def revive(self) -> None:
        """After the upstream exited, start it again: at most `config.restarts` tries in
        a row, over the proxy's life; past them it is not tried again."""
        async with self._reviving:
            while self.gone is not None:
                if self.failed_starts >= self.config.restarts:
                    raise MCPError(
                        code=types.INTERNAL_ERROR,
                        message=f"{self.gone}; it was not started again "
                        f"({self.config.restarts} tries failed)",
                    )
                failed = await self.upstream.restart()
                if failed is None:
                    self.gone, self.failed_starts = None, 0
                    await self.list_tools()
                    return
                self.failed_starts += 1
                self.gone = (
                    f"the upstream server has exited, and did not start again: "
                    f"{one_line(failed)[:200]}"
                )

    async def list_tools(self) -> list[types.Tool]:
        if self.gone is not None:
            await self.revive()
        listed: list[types.Tool] = []
        cursors: set[str] = set()
        cursor: str | None = None
        while True:
            try:
                with anyio.fail_after(self.config.timeout):  # as long as a call may take
                    page = await self.client.list_tools(cursor=cursor)
            except TimeoutError:
                raise MCPError(
                    code=types.INTERNAL_ERROR,
                    message=f"the upstream server did not list its tools within "
                    f"{self.config.timeout:g}s",
                ) from None
            except ValidationError as exc:  # the client's check of the answer
                raise MCPError(code=types.INTERNAL_ERROR, message=_unlike_mcp(exc)) from None
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
            # An upstream that never stops paging (a cursor seen before, or more pages
            # than any list of tools needs) would keep the proxy from ever starting.
            if cursor in cursors or len(cursors) >= MAX_TOOL_PAGES:
                raise MCPError(
                    code=types.INTERNAL_ERROR,
                    message=f"the upstream server's list of tools does not end "
                    f"(after {len(cursors) + 1} pages)",
                )
            cursors.add(cursor)
        self.tools = {t.name: t for t in listed}
        replay = types.Tool(name=REPLAY, description=REPLAY_DESCRIPTION, input_schema=REPLAY_SCHEMA)
        return [*(t for t in listed if t.name != REPLAY), replay]

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name == REPLAY:
            return await self.replay(arguments)
        if self.gone is not None:
            try:
                await self.revive()
            except MCPError as exc:
                raise MCPError(
                    code=exc.code, message=f"{exc.error.message}; nothing was sent"
                ) from None
        tool, unknown = await self._tool(name)
        if tool is None:
            return _refused(unknown)
        recorded = redact_urls(arguments)
        try:
            canonical_args(recorded)  # what the record holds: checked before the call
        except ArgumentError as exc:
            # The message names where the fault is: a key there may be megabytes long.
            said = one_line(exc)
            said = said if len(said) <= 300 else f"{said[:300]}…"
            return _refused(f"ArgumentError: {quoted(name)}: {said}; nothing was sent")
        determinism, _ = self.config.determinism_of(name, tool.annotations)
        rule = self.config.rule_for(name)
        key = rule.key_of(recorded) if rule else None
        action = determinism is Determinism.SIDE_EFFECT
        try:
            result = await self.client.session.call_tool(
                name, arguments, read_timeout_seconds=self.config.timeout
            )
        except Exception as exc:
            failure = self._failure(name, exc)
            record = await self._record_failure(name, recorded, failure, determinism, key)
            code = exc.code if isinstance(exc, MCPError) else types.INTERNAL_ERROR
            if isinstance(failure, DeadlineExceeded | UpstreamGone):
                code = types.INTERNAL_ERROR
            outcome = ", outcome unknown" if action else ""
            message = f"{one_line(failure)} (recorded as {record.id}{outcome})"
            raise MCPError(code=code, message=message) from exc
        except BaseException:
            # Cancelled (the client's notifications/cancelled, or the proxy stopping):
            # a side effect may have begun upstream, so it is recorded, shielded from
            # the cancellation, and a failure to record it does not stop the cancel.
            if action:
                stopped = CallCancelled(
                    f"the call to {name!r} was cancelled before the upstream server answered"
                )
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await self._record_failure(name, recorded, stopped, determinism, key)
            raise
        payload, media_type, meta = content.stored(result)
        options: RecordOptions = {"key": key, "media_type": media_type, "meta": meta}
        if result.is_error:
            options["status"] = Status.ERROR
            said = _first_text(result) or "the upstream tool reported an error"
            options["error"] = redact_urls(said)  # it may quote the arguments
        if action:
            options["outcome"] = Outcome.UNKNOWN if result.is_error else Outcome.COMPLETED
        stored = await anyio.to_thread.run_sync(
            functools.partial(
                self.kit.record, name, recorded, payload, determinism=determinism, **options
            )
        )
        return await self._handed(result, stored.record)

    async def _handed(self, result: types.CallToolResult, record: Record) -> types.CallToolResult:
        """What the client is handed of an upstream result: within its tool's first-sight
        cap (counted in a worker thread: megabytes take a while), with the link."""
        tool = self.tools.get(record.tool)
        schema = tool is not None and tool.output_schema is not None
        cap = self.config.cap_of(record.tool)
        shown = await anyio.to_thread.run_sync(
            functools.partial(sighted, result, record, cap, schema=schema)
        )
        return _linked(shown, record)

    async def _tool(self, name: str) -> tuple[types.Tool | None, str]:
        """The upstream's tool `name`, or None and why not. An upstream may add tools
        after it listed them: a name not known yet has the list read again, once."""
        if name in self.tools:
            return self.tools[name], ""
        why = ""
        try:
            await self.list_tools()
        except Exception as exc:  # the call is refused all the same: it names a tool not seen
            why = f" (its list of tools could not be read again: {one_line(exc)[:200]})"
        if name in self.tools:
            return self.tools[name], ""
        known = ", ".join(sorted({*self.tools, REPLAY}))
        return None, (
            f"the upstream server has no tool named {quoted(name)}{why}; "
            f"the tools are: {known}; nothing was sent"
        )

    async def replay(self, arguments: dict[str, Any]) -> types.CallToolResult:
        """A stored upstream result as it came, when asked whole; any other record, a
        range, a pattern or a cap, and every failure: `replay_result`'s own text."""
        wanted = arguments.get("id")
        whole = set(arguments) == {"id"}
        record: Record | None = None
        if isinstance(wanted, str):
            try:  # by the id rule replay_result has: a prefix names a record of this session
                record = self.kit.get(ReplayTool(self.kit).resolve(wanted))
            except AddressableError:
                record = None
        if record is not None and is_upstream(record):
            try:
                result = await anyio.to_thread.run_sync(self.kit.replay, record.id)
            except AddressableError:
                result = None  # gone since, or damaged: replay_result's text says which
            if result is not None:
                try:
                    came = original(record, result.payload)
                except (ValueError, KeyError, TypeError):  # a record made elsewhere
                    return _refused(
                        f"record {record.id} says it holds an upstream server's result, "
                        "but its payload is not one"
                    )
                if whole:
                    return await self._handed(came, record)
                return await self._selected(came, record, arguments)
        text = await self.kit.ahandle(REPLAY, arguments)
        content: list[Any] = [types.TextContent(type="text", text=text)]
        is_error = failed(self.kit, REPLAY, text)
        if record is not None and not is_error:
            content.append(results.link(record))
        return types.CallToolResult(content=content, is_error=is_error)

    async def _selected(
        self, original: types.CallToolResult, record: Record, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """A range, pattern or cap of a stored upstream result: taken of the text the
        upstream sent (its text blocks), not of the JSON the result is stored as."""
        tool = ReplayTool(self.kit)

        def select_text() -> str:
            # Said as kit.handle says it: refused before anything ran, or failed as it ran.
            try:
                checked = tool.checked(arguments)
            except ArgumentError as exc:
                return refused_text(self.kit.secrets, exc)
            try:
                text = select(_text_of(original), checked, self.kit.result_cap(REPLAY))
            except ArgumentError as exc:
                return failure_text(self.kit.secrets, exc)
            beside = describe([b.model_dump(by_alias=True) for b in original.content])
            if beside:  # as replay_result says it of a result with images beside its text
                text += f"\n[with it: {beside}, not shown as text]"
            return self.kit.secrets.mask(text)

        text = await anyio.to_thread.run_sync(select_text)  # a pattern may take a while
        error_text = text.startswith("error: ")
        content: list[Any] = [types.TextContent(type="text", text=text)]
        if not error_text:
            content.append(results.link(record))
        return types.CallToolResult(content=content, is_error=error_text or bool(original.is_error))

    def _failure(self, name: str, exc: Exception) -> Exception:
        """What went wrong with a call, as the exception to record."""
        # The client says a call timed out or the connection closed with these codes;
        # an upstream's own error may carry them too (-32000 is JSON-RPC's generic
        # server error): only the client's own words are taken for them.
        code = exc.code if isinstance(exc, MCPError) and _said_by_client(exc) else None
        if code == types.REQUEST_TIMEOUT or isinstance(exc, TimeoutError):
            return DeadlineExceeded(
                f"upstream tool {name!r} did not answer within {self.config.timeout:g}s"
            )
        if code == types.CONNECTION_CLOSED or isinstance(exc, anyio.ClosedResourceError):
            self.gone = "the upstream server has exited (it closed the connection)"
            return UpstreamGone(
                f"the upstream server closed the connection during {name!r} (it exited or crashed)"
            )
        said = str(exc)
        clean = redact_urls(said)
        if clean == said:
            return exc
        # Its text quotes the arguments (an upstream's error, its validation's): recorded
        # with the credentials in their URLs redacted, as the arguments are.
        if isinstance(exc, MCPError):
            return MCPError(code=exc.code, message=redact_urls(exc.error.message))
        return UpstreamError(f"{type(exc).__name__}: {clean}")

    async def _record_failure(
        self,
        name: str,
        arguments: dict[str, Any],
        exc: Exception,
        determinism: Determinism,
        key: str | None,
    ) -> Record:
        outcome = Outcome.UNKNOWN if determinism is Determinism.SIDE_EFFECT else None
        recorded = await anyio.to_thread.run_sync(
            functools.partial(
                self.kit.record_failure,
                name,
                arguments,
                exc,
                determinism=determinism,
                key=key,
                outcome=outcome,
                meta={"mcp": "error"},
            )
        )
        return recorded.record

    def server(self) -> Server[Any]:
        server: Server[Any] = Server("addressable-proxy")

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=await self.list_tools())

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            return await self.call(params.name, dict(params.arguments or {}))

        server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
        server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
        results.install(server, self.kit)
        return server


def _unlike_mcp(exc: ValidationError) -> str:
    """Why an upstream's list of tools was refused, in one line: where it is not as
    MCP has it, the first place named."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "the list"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"its list of tools is not as MCP has it: {where}: {one_line(first['msg'])}{more}"


def _refused(text: str) -> types.CallToolResult:
    """An error result of one line: a call refused before anything was sent, or a
    stored result that cannot be given back."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"error: {one_line(text)}")], is_error=True
    )


def _linked(result: types.CallToolResult, record: Record) -> types.CallToolResult:
    """The result as it came, with a link to its record beside the original content. A
    link or an embedded resource the upstream wrote under this proxy's scheme is said in
    words instead: the client takes `addressable://` links for records it can trust."""
    content = [_not_ours(block) for block in result.content]
    return result.model_copy(update={"content": [*content, results.link(record)]})


def _not_ours(block: Any) -> Any:
    """`block`, or a text saying what it was when it is a link or a resource under the
    proxy's scheme that the upstream made."""
    uri = ""
    if isinstance(block, types.ResourceLink):
        uri = str(block.uri)
    elif isinstance(block, types.EmbeddedResource):
        uri = str(block.resource.uri)
    if not uri.lower().startswith(results.SCHEME.split("/", 1)[0] + "/"):
        return block
    return types.TextContent(
        type="text",
        text=f"[the upstream server sent a {block.type} to {uri!r}, which is not one of "
        "this proxy's records: left out]",
    )


def _text_of(result: types.CallToolResult) -> str:
    """The text of an upstream result: its text blocks, one after another."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _said_by_client(exc: MCPError) -> bool:
    """Whether `exc` is the client's own timeout or closed connection, not an error the
    upstream answered with the same code."""
    message = exc.error.message
    return (
        message == "Connection closed" or re.fullmatch(r"Request .* timed out", message) is not None
    )


def _first_text(result: types.CallToolResult) -> str | None:
    for block in result.content:
        if isinstance(block, types.TextContent) and block.text.strip():
            # Redacted before it is cut: a cut could leave the start of a password.
            said: str = redact_urls(one_line(block.text))
            return said[:300]
    return None
