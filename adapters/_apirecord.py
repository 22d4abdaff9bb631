"""An Api call carried through and recorded: a read as a Reference with a max age, a write
as an Action with the outcome known from what was sent, a verification as its verdict
on the write it reads back."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import timedelta
from typing import Any

import addressable as ad

from ._apirequest import FAILURES, ApiRequests, Call, Sent
from ._apiscope import Action
from ._http import ResponseTooLarge
from ._urls import redact_url, rerun_url

VERIFY_TOOL = "api_verify"
# What a verification's read may fail with: its verdict is then unknown.
_READ_FAILURES: tuple[type[Exception], ...] = (*FAILURES, ResponseTooLarge)


class ApiRecording(ApiRequests):
    """What `Api` records of its calls: reads, writes and verifications, each made, sent
    and recorded. `Api` sets the attributes."""

    max_age: timedelta
    allow_secrets: frozenset[str]

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
