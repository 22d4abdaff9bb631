from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel

import addressable as ad
from addressable.core.records import with_tokens

WHEN = datetime(2026, 3, 11, 9, 30, 15, 123456, tzinfo=UTC)

RECORD = ad.Record(
    id="0123456789abcdef",
    tool="api",
    args={"url": "https://x/1", "body": {"n": 1.5, "tags": ["a", None, True]}},
    key="POST https://x/1",
    determinism=ad.Determinism.SIDE_EFFECT,
    status=ad.Status.ERROR,
    content_hash="f" * 64,
    size=3,
    media_type="application/json",
    observed_at=WHEN,
    session="s1",
    tokens=7,
    error="TimeoutError: slow",
    outcome=ad.Outcome.UNKNOWN,
    idempotency_key="idem-1",
    max_age=timedelta(minutes=5, microseconds=7),
    meta={"status_code": 504, "headers": {"etag": '"v1"'}},
)


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(RECORD, id="record"),
        pytest.param(
            ad.Result(
                record=RECORD,
                payload=b"\x00\xff\xfe binary",
                changed=True,
                previous_id="fedcba9876543210",
            ),
            id="result-binary",
        ),
        pytest.param(
            ad.Reference(
                id="0123456789abcdef",
                tool="fetch",
                key="https://x",
                gist="Title: first sentence.",
                tokens=6214,
                observed_at=WHEN,
            ),
            id="reference",
        ),
        pytest.param(
            ad.Claim(
                id="0123456789abcdef",
                tool="search",
                text='"q" found 3 hits: a, b, c',
                observed_at=WHEN,
            ),
            id="claim",
        ),
        pytest.param(ad.Observation(at=WHEN, session=None), id="observation"),
    ],
)
def test_json_round_trip_is_lossless(model: BaseModel) -> None:
    again = type(model).model_validate_json(model.model_dump_json())
    assert again == model
    assert again.model_dump_json() == model.model_dump_json()


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(RECORD, id="with-a-count"),
        pytest.param(
            RECORD.model_validate_json(RECORD.model_dump_json(exclude={"tokens"})), id="read"
        ),
    ],
)
def test_a_record_given_its_token_count_is_what_model_copy_gives(record: ad.Record) -> None:
    made = with_tokens(record, 12)
    expected = record.model_copy(update={"tokens": 12})
    assert made == expected and made.tokens == 12
    assert made.model_fields_set == expected.model_fields_set
    assert list(made.__dict__) == list(expected.__dict__)  # the fields in their order
    assert record.tokens != 12  # a new record: the one given is unchanged


def test_records_are_immutable() -> None:
    with pytest.raises(Exception, match="frozen"):
        RECORD.tool = "other"  # type: ignore[misc]


def test_result_content_follows_the_media_type() -> None:
    text = ad.Result(
        record=RECORD.model_copy(update={"media_type": "text/plain; charset=latin-1"}),
        payload="café".encode("latin-1"),
    )
    assert text.content == "café"
    data = ad.Result(record=RECORD, payload=b'{"a": [1]}')
    assert data.content == {"a": [1]}
    raw = ad.Result(record=RECORD.model_copy(update={"media_type": "image/png"}), payload=b"\x89P")
    assert raw.content == b"\x89P"


def test_a_results_repr_is_short_however_large_its_payload() -> None:
    big = ad.Result(record=RECORD, payload=b"x" * 1_000_000, replayed=True)
    assert repr(big) == (
        "Result(id='0123456789abcdef', tool='api', status='error', "
        f"payload=b'{'x' * 80}'… (1,000,000 bytes), replayed=True)"
    )
    small = ad.Result(record=RECORD, payload=b"ok", changed=False)
    assert repr(small) == (
        "Result(id='0123456789abcdef', tool='api', status='error', payload=b'ok', changed=False)"
    )
    assert str(big) == "x" * 1_000_000  # str() is the content, whole, as documented
