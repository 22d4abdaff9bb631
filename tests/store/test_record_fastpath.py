"""A new record is written in one pass, without pydantic, when every field is of its own
type (`_codec.new_record`); any other goes through pydantic. Both must give the same
record, and bytes that load back as it: a field added to `Record` and not to the one-pass
writer fails here."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import addressable as ad
from addressable.core.records import Determinism, Outcome, Record, Status
from addressable.ids import canonical_args
from addressable.recording.recorder import _validated
from addressable.store.codec import dump_record, load_record, new_record

TEXT = st.text(max_size=12)
SCALARS = st.one_of(
    TEXT,
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
TIMES = st.sampled_from(
    [
        datetime(2026, 3, 11, 9, 0, tzinfo=UTC),
        datetime(2026, 3, 11, 9, 0, 0, 123456, tzinfo=UTC),
        datetime(2026, 3, 11, 9, 0, tzinfo=timezone(timedelta(hours=2))),
        datetime(2026, 7, 1, tzinfo=ZoneInfo("Europe/Paris")),
        datetime(2026, 3, 11, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        datetime(2026, 3, 11, tzinfo=timezone(timedelta(seconds=37))),  # pydantic's way
    ]
)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "key": st.none() | TEXT,
        "media_type": st.none() | st.sampled_from(["text/plain", "application/json"]),
        "status": st.none() | st.sampled_from([Status.OK, Status.ERROR, "error"]),
        "error": st.none() | TEXT,
        "outcome": st.none() | st.sampled_from([*Outcome, "completed"]),
        "idempotency_key": st.none() | TEXT,
        "max_age": st.none()
        | st.sampled_from([timedelta(hours=1), timedelta(days=1, microseconds=3), 5]),
        "meta": st.none()
        | st.dictionaries(TEXT, JSON, max_size=3)
        | st.just({"t": (1, 2)}),  # a tuple: not plain JSON, so pydantic's way
    },
)


@settings(max_examples=400, deadline=None)
@given(
    args=st.dictionaries(st.sampled_from(["a", "b", "é", "z"]), JSON, max_size=3),
    options=OPTIONS,
    determinism=st.sampled_from(list(Determinism)),
    at=TIMES,
    session=st.none() | TEXT,
    tool=st.sampled_from(["produce", "tööl", 'q"x']),
)
def test_one_pass_gives_what_pydantic_gives(
    args: dict[str, Any],
    options: dict[str, Any],
    determinism: Determinism,
    at: datetime,
    session: str | None,
    tool: str,
) -> None:
    nonce = "ab" * 16 if determinism is Determinism.SIDE_EFFECT else None
    fields = (
        "0123456789abcdef",
        tool,
        args,
        canonical_args(args),
        options.get("key"),
        determinism,
        "cd" * 32,
        1234,
        at,
    )
    expected = _validated(fields, session, nonce, options)  # type: ignore[arg-type]
    made = new_record(fields, session, nonce, options)
    if made is None:
        return  # pydantic's way: nothing to compare
    record, stored = made
    assert record == expected
    assert record.model_fields_set == expected.model_fields_set
    assert record.observed_at.utcoffset() == expected.observed_at.utcoffset()
    for name in Record.model_fields:
        assert type(getattr(record, name)) is type(getattr(expected, name)), name
    assert load_record(record.id, stored) == expected
    body, written = stored.split(b"\n", 1)[1], dump_record(expected).split(b"\n", 1)[1]
    assert json.loads(body) == json.loads(written)
    assert list(json.loads(body)) == list(json.loads(written))  # the same fields, in order


def test_what_is_not_of_its_own_type_goes_through_pydantic() -> None:
    class Name(str):
        pass

    at = datetime(2026, 3, 11, tzinfo=UTC)
    fields = ("0123456789abcdef", "t", {}, b"{}", None, Determinism.DETERMINISTIC, "cd" * 32, 1, at)
    plain = new_record(fields, None, None, {})
    assert plain is not None and plain[0] == _validated(fields, None, None, {})
    for options in ({"max_age": 5}, {"meta": {"t": (1, 2)}}, {"error": Name("x")}):
        assert new_record(fields, None, None, options) is None, options
    assert _validated(fields, None, None, {"max_age": 5}).max_age == timedelta(seconds=5)


def test_values_nested_past_what_can_be_written_are_refused_as_before(
    disk_kit: ad.Toolkit,
) -> None:
    # pydantic's writer stops at a depth: a record it cannot write could not be
    # exported, so such a call is refused when recorded, the fast path or not.
    @disk_kit.tool(determinism="deterministic")
    def take(x: Any) -> str:
        return "ok"

    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    with pytest.raises(ad.ArgumentError):
        take(deep)
    with pytest.raises(ad.ArgumentError):
        disk_kit.record("t", {}, b"x", determinism="deterministic", meta={"d": deep})
    assert all(r.status is ad.Status.ERROR for r in disk_kit.store.records())
    ad.export_bundle(disk_kit.store, io.BytesIO())  # every record stored can be exported
