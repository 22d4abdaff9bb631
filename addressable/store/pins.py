"""How a `KeyValueStore` pins records, so that gc keeps them while the pin lasts: a
user pin until unpinned, another (a stub's) until its sessions end or its time is up."""

from __future__ import annotations

from datetime import UTC, datetime

from ..core.errors import ArgumentError
from .arguments import aware
from .codec import load_pin
from .index import PIN_REASONS, PINS, PINS_FOR
from .keys import PIN
from .protocol import USER_PIN, Pin
from .reading import Reading


class Pinning(Reading):
    """The pins of a `KeyValueStore`: a `Pin` under the record's id, and in the indexes."""

    def pin(
        self,
        record_id: str,
        *,
        reason: str = USER_PIN,
        session: str | None = None,
        until: datetime | None = None,
    ) -> None:
        self.get(record_id)
        if not isinstance(reason, str) or not reason or not reason.isidentifier():
            raise ArgumentError(f"a pin's reason must be a word, got {reason!r}")
        if reason == USER_PIN and (session is not None or until is not None):
            raise ArgumentError("a user pin lasts until unpinned: give no session or until")
        if until is not None:
            until = aware("pin until", until)
        held = self.pin_info(record_id)
        if reason == USER_PIN:
            if held is not None and held.reason == USER_PIN:
                return  # a user pin is never weakened
            under = held if held is not None and held.live(_now(None)) else None
            self._write(record_id, Pin(under=under), held)
        elif held is not None and held.reason == USER_PIN:
            # Kept under the user's pin, to hold again once the user unpins.
            under = _joined(held.under, reason, session, until)
            self._backend.set(PIN + record_id, _dumped(held.model_copy(update={"under": under})))
        else:
            self._write(record_id, _joined(held, reason, session, until), held)

    def _write(self, record_id: str, pin: Pin, held: Pin | None) -> None:
        """`pin` in place of `held`, in the indexes too (counted by `stats`)."""
        add = [(PINS, 0, record_id)]
        if pin.reason != USER_PIN:
            add += [(PINS_FOR + pin.reason, 0, record_id), (PIN_REASONS, 0, pin.reason)]
        remove = []
        if held is not None and held.reason not in (USER_PIN, pin.reason):
            remove = [(PINS_FOR + held.reason, 0, record_id)]
        self._backend.set(PIN + record_id, _dumped(pin))
        self._backend.index(add=add, remove=remove)

    def unpin(self, record_id: str) -> None:
        held = self.pin_info(record_id)
        if held is not None and held.under is not None and held.under.live(_now(None)):
            self._write(record_id, held.under, held)  # the pin the user's was put over
            return
        self._backend.delete(PIN + record_id)
        remove = [(PINS, 0, record_id)]
        if held is not None and held.reason != USER_PIN:
            remove.append((PINS_FOR + held.reason, 0, record_id))
        self._backend.index(remove=remove)

    def pin_info(self, record_id: str) -> Pin | None:
        raw = self._backend.get(PIN + record_id)
        return None if raw is None else load_pin(raw)

    def is_pinned(self, record_id: str, *, now: datetime | None = None) -> bool:
        held = self.pin_info(record_id)
        return held is not None and held.live(_now(now))

    def end_session(self, session: str) -> int:
        held_by = [
            (k[len(PIN) :], pin)
            for k in self._backend.keys(PIN)
            if (pin := self.pin_info(k[len(PIN) :])) is not None
            and (session in pin.sessions or (pin.under and session in pin.under.sessions))
        ]
        ended = 0
        for record_id, pin in held_by:
            if pin.under is not None:  # a user pin: the one under it loses the session
                left = [s for s in pin.under.sessions if s != session]
                under = pin.under.model_copy(update={"sessions": left}) if left else None
                self._backend.set(PIN + record_id, _dumped(pin.model_copy(update={"under": under})))
                continue
            left = [s for s in pin.sessions if s != session]
            if left:
                kept = pin.model_copy(update={"sessions": left})
                self._backend.set(PIN + record_id, _dumped(kept))
            else:
                self.unpin(record_id)
                ended += 1
        return ended


def _joined(held: Pin | None, reason: str, session: str | None, until: datetime | None) -> Pin:
    """A pin for `reason`, made over `held`. Pinned again, for this reason or while
    another holds it (a stub's over a checkpoint's): every session that holds it, and
    the later end, so that no pin ends another before its time. A pin with no end stays
    with no end."""
    if held is not None and (held.reason == reason or held.live(_now(None))):
        sessions = sorted({*held.sessions, *([session] if session else [])})
        until = None if held.until is None or until is None else max(until, held.until)
    else:
        sessions = [session] if session else []
    return Pin(reason=reason, sessions=sessions, until=until)


def _dumped(pin: Pin) -> bytes:
    return pin.model_dump_json(exclude_none=True).encode()


def _now(now: datetime | None) -> datetime:
    return datetime.now(UTC) if now is None else aware("now", now)
