"""Api: JSON over HTTP as named identities, within a scope; writes are Actions.

A GET is a Reference keyed by method, URL and identity, with a max age. POST, PUT,
PATCH and DELETE are Actions: each attempt is sent once (never retried on its own) with
an Idempotency-Key header, and optionally a marker written into the request body, so
that a later read can tell whether it took effect. The outcome comes from what is known:

    2xx                                  completed
    4xx other than 408 and 429           not_applied
    408, 429, 5xx                        unknown
    no connection made (nothing sent)    not_applied
    a timeout or a reset after sending   unknown

A call still running after `deadline` seconds (redirects and body included) is stopped
with `ad.DeadlineExceeded`: a read raises it, a write records it as `unknown` (or
`not_applied` if no connection was made).

`verify(action_id, identity=...)` reads the resource and compares the marker (or, with
no marker, the fields written), recording `completed`, `not_applied` or `unknown`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Sequence
from datetime import timedelta
from typing import Any

import addressable as ad
from addressable.recording.recorder import model_resolve

from ._apirecord import VERIFY_TOOL, ApiRecording
from ._apiscope import WRITES, Action, Scope
from ._base import Identity, schema
from ._clients import AsyncClient, Clients, SyncClient
from ._http import DEFAULT_DEADLINE, DEFAULT_MAX_BYTES, check_deadline
from ._urls import rerun_url

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_TIMEOUT", "VERIFY_TOOL", "WRITES", "Action", "Api", "Scope"]

DEFAULT_TIMEOUT = 10.0  # seconds
DEFAULT_MAX_AGE = timedelta(minutes=5)  # how long a read may be relied on


class Api(ApiRecording):
    """JSON APIs over httpx, as named identities whose credentials are secret references.

    Secret references (``secret:env:NAME``) are resolved in the headers of
    `identities`, which the user writes. In a URL they are resolved only for the names
    in `allow_secrets`, and only when the adapter is called from code (``api.get``,
    ``api.write``, a re-run of such a record): a reference in a model's arguments
    (`kit.handle`) is never resolved. A call with a reference it may not resolve raises
    `ScopeError` naming it, sends nothing and is not recorded. A URL that does not
    parse, or parses two ways, is an `ArgumentError` likewise; credentials written in a
    URL are sent, and kept redacted. A model authenticates only by naming an identity:
    a URL it writes with a user name or password (which the HTTP client would send in
    place of the identity's Authorization header) is a `ScopeError`, and nothing is
    sent.

    Redirects are followed only if the `client` given follows them
    (``follow_redirects=True``), and never to an origin outside the scope (the redirect
    is then the answer). The identity's headers go with a redirect only while it stays
    on the origin of the URL asked for, and no secret value follows one elsewhere.
    `timeout` bounds each connect and read, `deadline` the whole call (with a `client`
    you pass, checked between redirects and between chunks of the body only). An answer
    over `max_bytes` is not read past the limit: a read raises `ResponseTooLarge` (and
    is recorded as an error); a write is recorded with the outcome its status gives,
    without the body.
    """

    name = "api"
    description = (
        "Call a JSON HTTP API as one of the configured identities. GET reads; POST, PUT, "
        "PATCH and DELETE write and report their outcome: completed, not_applied or "
        "unknown. When it is unknown, use method VERIFY with the action_id before any "
        "retry."
    )
    input_schema = schema(
        {
            "method": {
                "type": "string",
                "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "VERIFY"],
            },
            "url": {"type": "string"},
            "identity": {"type": "string"},
            "body": {"type": "object", "description": "the JSON body of a write"},
            "action_id": {"type": "string", "description": "for VERIFY: the write to check"},
        },
        ["method", "identity"],
    )

    def __init__(
        self,
        kit: ad.Toolkit,
        *,
        identities: Iterable[Identity] = (),
        scope: Scope | None = None,
        client: SyncClient | None = None,
        async_client: AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        deadline: float = DEFAULT_DEADLINE,
        max_age: timedelta = DEFAULT_MAX_AGE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        allow_secrets: Collection[str] = (),
        name: str | None = None,
    ) -> None:
        deadline = check_deadline(deadline)  # before registering: a bad one is refused
        allowed = frozenset(ad.ids.listed(allow_secrets, "secret references"))
        super().__init__(kit, name)
        self.identities = {i.name: i for i in identities}
        self.scope = scope or Scope(origins=())  # by default nothing is allowed
        self._clients = Clients(client, async_client, timeout)
        self.timeout = timeout
        self.deadline = deadline
        self.allow_secrets = allowed
        self.max_age = max_age
        self.max_bytes = max_bytes
        kit.on_rerun(self.name, self._reread)

    def __call__(self, method: str, url: str, **kwargs: Any) -> ad.Result:
        """One call by its HTTP method, as the other adapters are called: `GET` is `get`
        (`identity=`, `action=`), any other method `write` (its keywords)."""
        if not isinstance(method, str):
            raise ad.ArgumentError(f"{self.name}: method must be a str, not {method!r}")
        verb = method.upper()
        if verb == "GET":
            return self.get(url, **kwargs)
        return self.write(verb, url, **kwargs)

    # -- reads -----------------------------------------------------------------------------

    def get(self, url: str, *, identity: str, action: Action = "read") -> ad.Result:
        """GET `url` as `identity`: a Reference with a max age."""
        return self._get(url, identity, action, self.allow_secrets)

    async def aget(self, url: str, *, identity: str, action: Action = "read") -> ad.Result:
        """The async twin of `get`: through the async client given (or one of the
        adapter's own); with only a sync client given, through that one, in a thread."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.get, url, identity=identity, action=action)
        return await self._aget(url, identity, action, self.allow_secrets)

    def _reread(self, record: ad.Record) -> ad.Result:
        url, identity = rerun_url(record), str(record.args["identity"])
        return self._get(url, identity, "replay", self.allow_secrets)

    # -- writes ----------------------------------------------------------------------------

    def post(self, url: str, **kwargs: Any) -> ad.Result:
        return self.write("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> ad.Result:
        return self.write("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> ad.Result:
        return self.write("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> ad.Result:
        return self.write("DELETE", url, **kwargs)

    def write(
        self,
        method: str,
        url: str,
        *,
        identity: str,
        json_body: dict[str, Any] | None = None,
        marker_field: str | None = None,
        idempotency_key: str | None = None,
        depends_on: Sequence[str] = (),
    ) -> ad.Result:
        """Send one write and record the Action with the outcome that is known.

        With `marker_field`, a marker unique to this attempt is written into that field
        of the body, for `verify` to look for. Transport failures are not raised: they
        are outcomes (`not_applied` if nothing was sent, else `unknown`). With
        `depends_on` (ids of the reads it relies on), it is refused with `Stale` while
        any of them is stale.
        """
        call = self._write_call(
            method,
            url,
            identity=identity,
            json_body=json_body,
            marker_field=marker_field,
            idempotency_key=idempotency_key,
            depends_on=depends_on,
            allowed=self.allow_secrets,
        )
        return self._write_result(call, self._send(call))

    async def awrite(
        self,
        method: str,
        url: str,
        *,
        identity: str,
        json_body: dict[str, Any] | None = None,
        marker_field: str | None = None,
        idempotency_key: str | None = None,
        depends_on: Sequence[str] = (),
    ) -> ad.Result:
        """The async twin of `write`."""
        if self._clients.sync_only:
            return await asyncio.to_thread(
                self.write,
                method,
                url,
                identity=identity,
                json_body=json_body,
                marker_field=marker_field,
                idempotency_key=idempotency_key,
                depends_on=depends_on,
            )
        call = self._write_call(
            method,
            url,
            identity=identity,
            json_body=json_body,
            marker_field=marker_field,
            idempotency_key=idempotency_key,
            depends_on=depends_on,
            allowed=self.allow_secrets,
        )
        return self._write_result(call, await self._asend(call))

    # -- verification ------------------------------------------------------------------

    def verify(self, action_id: str, *, identity: str, read: str | None = None) -> ad.Result:
        """Read the resource an Action wrote (or `read`) as `identity` and record whether
        the write took effect: the marker (or the fields written) present is
        `completed`, absent is `not_applied`, a failed read is `unknown`."""
        return self._verify(action_id, identity, read, self.allow_secrets)

    async def averify(self, action_id: str, *, identity: str, read: str | None = None) -> ad.Result:
        """The async twin of `verify`."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.verify, action_id, identity=identity, read=read)
        return await self._averify(action_id, identity, read, self.allow_secrets)

    def outcome(self, action_id: str) -> ad.Outcome | None:
        """What is known of an Action now: its latest verification, else its own."""
        return self.kit.outcome(action_id)

    # -- the model's side --------------------------------------------------------------

    def handle(self, arguments: dict[str, Any]) -> str:
        # A model's arguments: no secret reference in them is ever resolved.
        method, identity = _model_call(arguments)
        if method == "VERIFY":
            read = arguments.get("url")
            action_id = self._model_id(_needed(arguments, "action_id", method))
            return self._verify(action_id, identity, _str(read), None).text
        url = _needed(arguments, "url", method)
        if method == "GET":
            return self.render(self._get(url, identity, "read", None))
        call = self._write_call(
            method, url, identity=identity, json_body=arguments.get("body"), allowed=None
        )
        return self.render(self._write_result(call, self._send(call)))

    async def ahandle(self, arguments: dict[str, Any]) -> str:
        """A model's call from async code (`kit.ahandle`): through the async client given
        (or one of the adapter's own); with only a sync client given, through that one,
        in a thread."""
        if self._clients.sync_only:
            return await asyncio.to_thread(self.handle, arguments)
        method, identity = _model_call(arguments)
        if method == "VERIFY":
            read = arguments.get("url")
            action_id = self._model_id(_needed(arguments, "action_id", method))
            return (await self._averify(action_id, identity, _str(read), None)).text
        url = _needed(arguments, "url", method)
        if method == "GET":
            return self.render(await self._aget(url, identity, "read", None))
        call = self._write_call(
            method, url, identity=identity, json_body=arguments.get("body"), allowed=None
        )
        return self.render(self._write_result(call, await self._asend(call)))

    def _model_id(self, text: str) -> str:
        """The action a model names: a prefix only among its own session's records, as
        `replay_result` reads it (another session's are not its to probe)."""
        return model_resolve(self.kit.store, self.kit.session, text)

    def render(self, result: ad.Result) -> str:
        """A read as its body (an error said so); a write headed by its action id and
        outcome, so that the model can verify it."""
        rec = result.record
        if rec.determinism is not ad.Determinism.SIDE_EFFECT:
            return result.text if result.ok else f"error: {rec.error}\n{result.text}"
        head = f"[action {rec.id}: {rec.outcome.value if rec.outcome else '?'}"
        if rec.outcome is ad.Outcome.UNKNOWN:
            head += "; it may or may not have taken effect: VERIFY it before any retry"
        return f"{head}]\n{result.text}"


def _model_call(arguments: dict[str, Any]) -> tuple[str, str]:
    return str(arguments.get("method", "GET")).upper(), str(arguments["identity"])


def _needed(arguments: dict[str, Any], name: str, method: str) -> str:
    if arguments.get(name) is None:
        raise ad.ArgumentError(f"api: {method} needs the argument {name!r}")
    return str(arguments[name])


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
