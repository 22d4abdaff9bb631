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

Each call is made ready first (`Call`: checked against the scope, the secrets allowed
and the identity, with its headers), then sent once through the sync or the async
client, a transport failure returned rather than raised (`Sent`), then recorded.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from pydantic import ConfigDict

import addressable as ad
from addressable.recording.argerrors import CheckedModel
from addressable.recording.recorder import model_resolve

from ._base import Adapter, Identity, schema
from ._clients import HTTP_ERRORS, AsyncClient, Clients, SyncClient
from ._http import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_BYTES,
    BadAnswer,
    Exchange,
    ResponseTooLarge,
    check_deadline,
    staying_in,
)
from ._urls import (
    check_url,
    has_userinfo,
    normalize_url,
    origin,
    redact_url,
    rerun_url,
    shown_url,
    wire_of,
)

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_TIMEOUT", "VERIFY_TOOL", "WRITES", "Action", "Api", "Scope"]

DEFAULT_TIMEOUT = 10.0  # seconds
DEFAULT_MAX_AGE = timedelta(minutes=5)  # how long a read may be relied on
VERIFY_TOOL = "api_verify"

Action = Literal["read", "replay", "reversible-write", "write"]
WRITES = {
    "POST": "write",
    "DELETE": "write",
    "PUT": "reversible-write",
    "PATCH": "reversible-write",
}

# What a call may fail with: the transport's failures, the deadline, an answer that
# cannot be read as sent.
FAILURES: tuple[type[Exception], ...] = (*HTTP_ERRORS, ad.DeadlineExceeded, BadAnswer)

# What a verification's read may fail with: its verdict is then unknown.
_READ_FAILURES: tuple[type[Exception], ...] = (*FAILURES, ResponseTooLarge)


class Scope(CheckedModel):
    """What an Api adapter may do: which origins, as which identities, which actions.
    A call outside it raises `ScopeError` and nothing is sent. "write" allows
    reversible writes too, and "read" the re-read of a recorded read
    (`replay(id, verify=True)`); "replay" alone allows only that re-read."""

    model_config = ConfigDict(frozen=True)

    origins: tuple[str, ...]
    identities: tuple[str, ...] | None = None  # None: every identity the adapter knows
    actions: frozenset[Action] = frozenset({"read", "replay"})

    def check(self, url: str, identity: str, action: Action) -> None:
        where = check_url(url)  # a URL that does not parse is an ArgumentError
        if where not in {origin(o) for o in self.origins}:
            raise ad.ScopeError(f"{where} is not an allowed origin; nothing was sent")
        if self.identities is not None and identity not in self.identities:
            raise ad.ScopeError(
                f"identity {ad.ids.quoted(identity)} is outside the scope; nothing was sent"
            )
        allowed = set(self.actions)
        if "write" in allowed:
            allowed.add("reversible-write")
        if "read" in allowed:  # a re-read is a read
            allowed.add("replay")
        if action not in allowed:
            raise ad.ScopeError(f"{action} is outside the scope; nothing was sent")


class Api(Adapter):
    """JSON APIs over httpx, as named identities whose credentials are secret
    references, within a `Scope`; writes are Actions (their outcomes: see the module).

    Secret references (``secret:env:NAME``) are resolved in the headers of `identities`,
    and in a URL only for the names in `allow_secrets` when the adapter is called from
    code. A call outside the scope, a reference it may not resolve, or a URL from a
    model with a user name or password in it is a `ScopeError`, and a URL that does not
    parse one way an `ArgumentError`; nothing is then sent or recorded. Redirects are
    followed only if the `client` given follows them, and never out of the scope.
    `timeout` bounds each connect and read, `deadline` the whole call. An answer over
    `max_bytes` is not read past it: a read raises `ResponseTooLarge`; a write is
    recorded with the outcome its status gives. What it refuses and why:
    docs/security.md, "Fetch and Api".
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

    def close(self) -> None:
        """Close the sync client this adapter made (not one it was given)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close every client this adapter made (not ones it was given)."""
        await self._clients.aclose()

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

    # -- a call made ready -----------------------------------------------------------------

    def _read_call(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> Call:
        """A GET checked against the scope and the secrets allowed; nothing sent yet."""
        self._check(url, identity, action, allowed)
        self.kit.secrets.check_allowed(url, allowed, "the URL")
        credentials = self._credentials(identity)
        wire, url = self._wire(url), redact_url(url)
        return Call(
            method="GET",
            wire=wire,
            url=url,
            credentials=credentials,
            headers=self._headers(credentials),
            args={"method": "GET", "url": url, "identity": identity},
            key=f"GET {normalize_url(url)} as {identity}",
        )

    def _write_call(
        self,
        method: str,
        url: str,
        *,
        identity: str,
        json_body: dict[str, Any] | None = None,
        marker_field: str | None = None,
        idempotency_key: str | None = None,
        depends_on: Sequence[str] = (),
        allowed: Collection[str] | None,
    ) -> Call:
        """A write checked against the scope, the secrets allowed and the freshness of
        what it depends on, with its idempotency key and marker; nothing sent yet."""
        method = method.upper()
        if method not in WRITES:
            raise ad.ArgumentError(f"{method} is not a write: use {', '.join(WRITES)}")
        self._check(url, identity, WRITES[method], allowed)  # type: ignore[arg-type]
        self.kit.secrets.check_allowed(url, allowed, "the URL")
        self.kit.require_fresh(depends_on)  # a write on stale facts waits: nothing is sent
        key = idempotency_key or uuid.uuid4().hex
        body = dict(json_body) if json_body is not None else None
        if body is not None:
            # Not JSON (NaN, a cycle) or nested deeper than a record holds: refused, and
            # nothing sent (a write sent and then not recorded would be lost).
            ad.ids.canonical_json(body, name="the body", argument=True)
        marker = None
        if marker_field is not None:
            marker = f"ad-{key[:16]}"
            body = {**(body or {}), marker_field: marker}
        credentials = self._credentials(identity)
        wire, url = self._wire(url), redact_url(url)
        return Call(
            method=method,
            wire=wire,
            url=url,
            credentials=credentials,
            headers={**self._headers(credentials), "Idempotency-Key": key},
            args={"method": method, "url": url, "identity": identity, "body": body},
            key=key,
            body=body,
            meta={
                ad.Report.MARKER: marker,
                "marker_field": marker_field,
                ad.Report.WRITTEN: ["body"],
            },
        )

    def _check(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> None:
        """The identity known, the URL in scope; from a model (`allowed` None), a URL
        with no user name or password, which the HTTP client would send in place of the
        identity's own Authorization header."""
        if identity not in self.identities:
            known = ", ".join(sorted(self.identities)) or "none"
            raise ad.ScopeError(
                f"no identity named {ad.ids.quoted(identity)} (known: {known}); nothing was sent"
            )
        self.scope.check(url, identity, action)
        self.identities[identity].check_origin(origin(url))  # its own origins, if it names any
        if allowed is None and has_userinfo(url):
            raise ad.ScopeError(
                f"{shown_url(url)}: a URL may not hold a user name or password; "
                "credentials come only from the identity named; nothing was sent"
            )

    def _wire(self, url: str) -> str:
        """The URL sent: `url` with its secret references resolved, pointing where it
        does."""
        return wire_of(url, self.kit.secrets)

    def _credentials(self, identity: str) -> dict[str, str]:
        return self.identities[identity].resolved_headers(self.kit.secrets)

    def _headers(self, credentials: dict[str, str]) -> dict[str, str]:
        return {"Accept": "application/json", **credentials}

    def _exchange(self, call: Call, follow: bool) -> Exchange:
        stay = staying_in({origin(o) for o in self.scope.origins}, "the scope")
        return Exchange(
            self.kit.secrets,
            credentials=call.credentials,
            deadline=self.deadline,
            what=f"{call.method} {call.url}",
            follow=follow,
            stay=stay,
        )

    # -- sending ---------------------------------------------------------------------------

    def _send(self, call: Call) -> Sent:
        """Send `call` through the sync client; a failure is returned, not raised (see
        `kit.failed`)."""
        client = self._clients.sync()
        exchange = self._exchange(call, client.follow_redirects)
        request = client.build_request(call.method, call.wire, json=call.body, headers=call.headers)
        body = _Body(self.max_bytes)
        try:
            response = exchange.send(client, request, body.add)
        except BadAnswer as exc:
            return _unreadable(call, exchange, exc)
        except BaseException as exc:
            return _failed(call, exchange, exc)
        return Sent(exchange, response, bytes(body.data), over=body.over)

    async def _asend(self, call: Call) -> Sent:
        """`_send` through the async client."""
        client = self._clients.asynchronous()
        exchange = self._exchange(call, client.follow_redirects)
        request = client.build_request(call.method, call.wire, json=call.body, headers=call.headers)
        body = _Body(self.max_bytes)
        try:
            response = await exchange.asend(client, request, body.add)
        except BadAnswer as exc:
            return _unreadable(call, exchange, exc)
        except BaseException as exc:
            return _failed(call, exchange, exc)
        return Sent(exchange, response, bytes(body.data), over=body.over)

    # -- recording -------------------------------------------------------------------------

    def _get(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> ad.Result:
        call = self._read_call(url, identity, action, allowed)
        return self._read_result(call, self._send(call))

    async def _aget(
        self, url: str, identity: str, action: Action, allowed: Collection[str] | None
    ) -> ad.Result:
        call = self._read_call(url, identity, action, allowed)
        return self._read_result(call, await self._asend(call))

    def _read_result(self, call: Call, sent: Sent) -> ad.Result:
        """Record what a GET gave: the response, or the failure (then raised)."""
        if sent.over:
            sent.error = ResponseTooLarge(self._too_large(call))
        if sent.error is not None:
            self.kit.record_failure(
                self.name, call.args, sent.error, determinism="deterministic", key=call.key
            )
            raise sent.error
        response = sent.response
        meta: dict[str, Any] = {"status_code": response.status_code}
        if sent.exchange.note is not None:
            meta["redirect"] = sent.exchange.note
        options: ad.RecordOptions = {
            "key": call.key,
            "max_age": self.max_age,
            "media_type": response.headers.get("content-type", "application/json"),
            "meta": meta,
        }
        if response.status_code >= 400:
            options["status"] = ad.Status.ERROR
            options["error"] = (
                f"HTTP {response.status_code} {response.reason_phrase} for {call.url}"
            )
        return self.kit.record(
            self.name, call.args, sent.body, determinism="deterministic", **options
        )

    def _write_result(self, call: Call, sent: Sent) -> ad.Result:
        """Record the Action with the outcome that is known from what was sent."""
        args, key, meta = call.args, call.key, dict(call.meta)
        if sent.error is not None:
            if sent.exchange.nothing_sent(sent.error):  # no connection was made
                done = self._action(args, key, meta, ad.Outcome.NOT_APPLIED, sent.error, sent=False)
            else:  # timeouts, resets, the deadline, anything after the request went out
                done = self._action(args, key, meta, ad.Outcome.UNKNOWN, sent.error, sent=True)
            if not isinstance(sent.error, Exception):
                raise sent.error  # an interrupt (a task cancelled): recorded, and let through
            return done
        if sent.exchange.note is not None:
            meta["redirect"] = sent.exchange.note
        response = sent.response
        code = response.status_code
        # A 301, 302 or 303 the client followed turned the write into a GET of another
        # page (a login page, a result page): its answer says nothing sure of the write.
        # A 307 or 308 sends the same write on, and its answer is the write's.
        redirected = [r.status_code for r in getattr(response, "history", ())]
        changed = [c for c in redirected if c not in (307, 308)]
        if redirected:
            meta["redirected_from"] = redirected
        if changed:
            outcome = ad.Outcome.UNKNOWN
        elif 200 <= code < 300:
            outcome = ad.Outcome.COMPLETED
        elif 400 <= code < 500 and code not in (408, 429):
            outcome = ad.Outcome.NOT_APPLIED
        else:
            outcome = ad.Outcome.UNKNOWN
        meta["status_code"] = code
        error = None if outcome is ad.Outcome.COMPLETED else f"HTTP {code} {response.reason_phrase}"
        if changed:
            error = f"HTTP {changed[0]} then {code}: the write became another request; verify it"
        body, media_type = sent.body, response.headers.get("content-type", "application/json")
        if sent.over:  # the status tells the outcome; the body is not kept
            body, media_type = self._too_large(call).encode(), "text/plain; charset=utf-8"
            meta["body_over"] = self.max_bytes
        elif sent.unreadable is not None:  # the same: the body could not be read
            body, media_type = f"[{sent.unreadable}]".encode(), "text/plain; charset=utf-8"
            meta["body_unreadable"] = sent.unreadable
        return self.kit.record(
            self.name,
            args,
            body,
            determinism="side_effect",
            outcome=outcome,
            key=key,
            idempotency_key=key,
            meta=meta,
            media_type=media_type,
            status=ad.Status.OK if error is None else ad.Status.ERROR,
            error=error,
        )

    def _too_large(self, call: Call) -> str:
        return (
            f"the answer to {call.method} {call.url} is over the limit of {self.max_bytes:,} "
            "bytes; raise max_bytes on the Api adapter to take it"
        )

    def _action(
        self,
        args: dict[str, Any],
        key: str,
        meta: dict[str, Any],
        outcome: ad.Outcome,
        exc: BaseException,
        *,
        sent: bool,
    ) -> ad.Result:
        when = "after sending" if sent else "before anything was sent"
        message = f"{type(exc).__name__} {when}: {exc}"
        return self.kit.record(
            self.name,
            args,
            message.encode(),
            determinism="side_effect",
            outcome=outcome,
            key=key,
            idempotency_key=key,
            meta=meta,
            status=ad.Status.ERROR,
            error=message,
        )

    # -- verifying -------------------------------------------------------------------------

    def _verify(
        self, action_id: str, identity: str, read: str | None, allowed: Collection[str] | None
    ) -> ad.Result:
        action, url, allowed = self._verify_call(action_id, read, allowed)
        try:
            seen = self._get(url, identity, "read", allowed)
        except _READ_FAILURES as exc:
            return self._verified(action, url, identity, exc)
        return self._verified(action, url, identity, seen)

    async def _averify(
        self, action_id: str, identity: str, read: str | None, allowed: Collection[str] | None
    ) -> ad.Result:
        action, url, allowed = self._verify_call(action_id, read, allowed)
        try:
            seen = await self._aget(url, identity, "read", allowed)
        except _READ_FAILURES as exc:
            return self._verified(action, url, identity, exc)
        return self._verified(action, url, identity, seen)

    def _verify_call(
        self, action_id: str, read: str | None, allowed: Collection[str] | None
    ) -> tuple[ad.Record, str, Collection[str] | None]:
        """The write to verify, the URL to read and the secrets that read may resolve."""
        action = self.kit.get(action_id)
        if action.tool != self.name or action.determinism is not ad.Determinism.SIDE_EFFECT:
            raise ad.ArgumentError(f"{action.id} is not a write of this adapter")
        if read is not None:
            return action, read, allowed
        # The action's own URL was recorded from a call the adapter allowed; one whose
        # credential was not kept is not read with "[redacted]" in its place (a server
        # that answers 404 to a wrong key would say the write was not applied).
        try:
            url = rerun_url(action)
        except ad.NotReplayable:
            raise ad.NotReplayable(
                f"{self.name}: action {action.id} wrote to a URL whose credential was not "
                "kept, so it cannot be read back from its record: give the URL to read "
                "(url, or read= from code)"
            ) from None
        return action, url, self.allow_secrets

    def _verified(
        self, action: ad.Record, url: str, identity: str, seen: ad.Result | Exception
    ) -> ad.Result:
        """Record what the read `seen` (or its failure) says of the write."""
        args = {"action": action.id, "read": redact_url(url), "identity": identity}
        if isinstance(seen, Exception):
            outcome, why, read_id = ad.Outcome.UNKNOWN, f"the read failed: {seen}", None
        else:
            outcome, why = _judge(action, seen)
            read_id = seen.id
        what = f"{action.args['method']} {action.args['url']}"
        text = f"action {action.id} ({what}): {outcome.value}; {why}"
        return self.kit.record(
            VERIFY_TOOL,
            args,
            text.encode(),
            determinism="nondeterministic",
            outcome=outcome,
            meta={ad.Report.VERIFIES: action.id, "read": read_id},
        )


@dataclass
class Call:
    """One call checked and ready to send: nothing of it depends on the client."""

    method: str
    wire: str  # the URL sent, secrets resolved
    url: str  # the URL recorded
    credentials: dict[str, str]
    headers: dict[str, str]
    args: dict[str, Any]
    key: str  # a read's record key; a write's idempotency key
    body: dict[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Sent:
    """What sending a call gave: the last response and its body, or the failure. `over`:
    the body went over the size limit, and was not read past it."""

    exchange: Exchange
    response: Any = None
    body: bytes = b""
    error: BaseException | None = None
    over: bool = False
    unreadable: str | None = None  # why the body could not be read (its status was)


def _failed(call: Call, exchange: Exchange, exc: BaseException) -> Sent:
    """A failure to record, whatever it is: a write's request may have gone out before
    it (a reset, the deadline, an answer that does not decode, memory running out), and
    its Action is recorded all the same. A read's is only its transport's and deadline's
    failures; an interrupt (Ctrl-C, a task cancelled) of a write is recorded, then
    raised again (`Api._write_result`)."""
    if call.method == "GET" and not isinstance(exc, FAILURES):
        raise exc
    return Sent(exchange, error=exc)


def _unreadable(call: Call, exchange: Exchange, exc: BadAnswer) -> Sent:
    """An answer whose body could not be read: a write whose status was read has the
    outcome its status gives (its body is not kept, as one over the limit is not)."""
    if call.method == "GET" or exc.response is None:
        return _failed(call, exchange, exc)
    return Sent(exchange, exc.response, unreadable=str(exc))


class _Body:
    """A response body up to `limit` bytes: past it, reading stops (a write's answer
    still tells its status; its body is not held in memory or kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.over = False

    def add(self, chunk: bytes) -> bool:
        if len(self.data) + len(chunk) > self.limit:
            self.over = True
            return False
        self.data.extend(chunk)
        return True


def _judge(action: ad.Record, seen: ad.Result) -> tuple[ad.Outcome, str]:
    code = seen.record.meta.get("status_code")
    method = str(action.args["method"])
    if method == "DELETE" and code in (404, 410):
        return ad.Outcome.COMPLETED, f"the resource is gone (HTTP {code})"
    if not isinstance(code, int) or code >= 500 or code in (408, 429):
        return ad.Outcome.UNKNOWN, f"the read answered HTTP {code}"
    if code in (404, 410):
        return ad.Outcome.NOT_APPLIED, f"the resource is not there (HTTP {code})"
    if code >= 400:  # refused (401, 403, ...): the read says nothing of the write
        return ad.Outcome.UNKNOWN, f"the read was refused (HTTP {code})"
    if method == "DELETE":
        return ad.Outcome.NOT_APPLIED, "the resource is still there"
    try:
        current = json.loads(seen.payload)
    except ValueError:
        return ad.Outcome.UNKNOWN, "the resource is not JSON"
    marker = action.meta.get(ad.Report.MARKER)
    if isinstance(marker, str):
        if _contains(current, marker):
            return ad.Outcome.COMPLETED, f"the marker {marker} is in the resource"
        return ad.Outcome.NOT_APPLIED, f"the marker {marker} is not in the resource"
    body = action.args.get("body")
    if isinstance(body, dict) and isinstance(current, dict):
        if all(current.get(k) == v for k, v in body.items()):
            return ad.Outcome.COMPLETED, "every field written has the value written"
        return ad.Outcome.NOT_APPLIED, "some field written has another value"
    return ad.Outcome.UNKNOWN, "nothing to compare: write with marker_field to verify"


def _contains(value: Any, marker: str) -> bool:
    if isinstance(value, str):
        return marker in value
    if isinstance(value, dict):
        return any(_contains(v, marker) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, marker) for v in value)
    return False


def _model_call(arguments: dict[str, Any]) -> tuple[str, str]:
    return str(arguments.get("method", "GET")).upper(), str(arguments["identity"])


def _needed(arguments: dict[str, Any], name: str, method: str) -> str:
    if arguments.get(name) is None:
        raise ad.ArgumentError(f"api: {method} needs the argument {name!r}")
    return str(arguments[name])


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
