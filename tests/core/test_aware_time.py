"""Time is always aware: a naive datetime is refused where it enters (a Toolkit's clock,
a record, an observation, a bundle line), so no two times compared are ever one naive
and one aware, and times with different UTC offsets order as the instants they are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import addressable as ad

NAIVE = datetime(2026, 3, 11, 9, 0)
AWARE = datetime(2026, 3, 11, 9, 0, tzinfo=UTC)


class TurningClock:
    """Aware until `turn()`, naive after: a clock that goes wrong mid-run."""

    def __init__(self) -> None:
        self.naive = False

    def __call__(self) -> datetime:
        return NAIVE if self.naive else AWARE

    def turn(self) -> None:
        self.naive = True


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[ad.DiskStore]:
    with ad.DiskStore(tmp_path / "store") as store:
        yield store


# -- the Toolkit's clock ----------------------------------------------------------------


@pytest.mark.parametrize("session", [None, "named"])
def test_a_naive_clock_is_refused_when_the_kit_is_made(
    disk: ad.DiskStore, session: str | None
) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        ad.Toolkit(disk, session=session, clock=lambda: NAIVE)
    message = str(info.value)
    assert "clock" in message and "datetime.datetime(2026, 3, 11, 9, 0)" in message
    assert "naive" in message and "\n" not in message


def test_a_clock_that_gives_no_datetime_is_refused(disk: ad.DiskStore) -> None:
    with pytest.raises(ad.ArgumentError, match=r"clock gave 1773219600\.0, a float"):
        ad.Toolkit(disk, session="s", clock=lambda: 1773219600.0)  # type: ignore[arg-type,return-value]


def test_any_aware_clock_is_accepted_and_kept(disk: ad.DiskStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    kit = ad.Toolkit(disk, session="s", clock=lambda: datetime(2026, 3, 11, 11, 0, tzinfo=plus_two))
    res = kit.record("t", {}, b"x", determinism="deterministic")
    assert res.record.observed_at == AWARE  # the same instant
    assert disk.get(res.id).observed_at.utcoffset() is not None


def test_a_clock_turning_naive_mid_run_fails_the_read_with_a_clear_error(
    disk: ad.DiskStore,
) -> None:
    clock = TurningClock()
    kit = ad.Toolkit(disk, session="s", clock=clock)
    clock.turn()
    with pytest.raises(
        ad.ArgumentError, match=r"clock gave datetime\.datetime\(2026, 3, 11, 9, 0\)"
    ):
        kit.record("t", {}, b"x", determinism="deterministic")
    assert list(disk.records()) == []


def test_a_clock_turning_naive_mid_run_still_records_the_action(disk: ad.DiskStore) -> None:
    clock = TurningClock()
    kit = ad.Toolkit(disk, session="s", clock=clock)
    ran = []

    @kit.tool(determinism="side_effect")
    def deploy(target: str) -> str:
        ran.append(target)
        return "deployed"

    clock.turn()
    with pytest.raises(ad.ArgumentError, match="naive") as info:
        deploy("prod")
    assert ran == ["prod"]
    (record,) = disk.records(tool="deploy")
    assert record.id in str(info.value)
    assert (record.status, record.outcome) == (ad.Status.ERROR, ad.Outcome.UNKNOWN)
    assert record.observed_at.tzinfo is not None  # the true time, not the naive one
    assert record.error is not None and "naive" in record.error


def test_staleness_with_a_clock_turned_naive_is_a_clear_error(disk: ad.DiskStore) -> None:
    clock = TurningClock()
    kit = ad.Toolkit(disk, session="s", clock=clock)
    read = kit.record(
        "api", {"u": 1}, b"{}", determinism="deterministic", max_age=timedelta(minutes=5)
    )
    clock.turn()
    with pytest.raises(ad.ArgumentError, match="naive"):  # not TypeError from comparing
        kit.require_fresh([read.id])


# -- the models ------------------------------------------------------------------------


def record_fields(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "0123456789abcdef",
        "tool": "fetch",
        "args": {"url": "https://x/"},
        "determinism": "deterministic",
        "content_hash": "f" * 64,
        "size": 1,
        "media_type": "text/plain",
        "observed_at": AWARE,
    }
    return fields | changes


@pytest.mark.parametrize(
    "when", [NAIVE, "2026-03-11T09:00:00", "2026-03-11T09:00:00.123456", "2026-03-11"]
)
def test_a_record_refuses_a_naive_time(when: Any) -> None:
    with pytest.raises(ValidationError, match="timezone"):
        ad.Record.model_validate(record_fields(observed_at=when))


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        pytest.param(ad.Observation, {"at": NAIVE}, id="observation"),
        pytest.param(
            ad.Reference,
            {"id": "0123456789abcdef", "tool": "t", "key": "k", "gist": "g", "tokens": 1},
            id="reference",
        ),
        pytest.param(ad.Claim, {"id": "0123456789abcdef", "tool": "t", "text": "x"}, id="claim"),
    ],
)
def test_every_model_refuses_a_naive_time(model: type[Any], fields: dict[str, Any]) -> None:
    if "at" not in fields:
        fields = {**fields, "observed_at": NAIVE}
    with pytest.raises(ValidationError, match="timezone"):
        model.model_validate(fields)


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-03-11T09:00:00Z", AWARE),  # how records are written
        ("2026-03-11T09:00:00+00:00", AWARE),
        ("2026-03-11T11:00:00+02:00", AWARE),
    ],
)
def test_stored_times_with_an_offset_still_load(text: str, instant: datetime) -> None:
    line = json.dumps(record_fields(observed_at=text))
    record = ad.Record.model_validate_json(line)
    assert record.observed_at == instant
    assert ad.Observation.model_validate_json(json.dumps({"at": text})).at == instant


def test_records_written_by_a_store_load_back_aware(tmp_path: Path) -> None:
    with ad.DiskStore(tmp_path / "store") as store:
        kit = ad.Toolkit(store, session="s")
        first = kit.record("t", {"n": 1}, b"x", determinism="deterministic")
        kit.record("t", {"n": 1}, b"x", determinism="deterministic")  # a second sighting
    with ad.DiskStore(tmp_path / "store") as again:
        record = again.get(first.id)
        assert record == first.record and record.observed_at.tzinfo is not None
        seen = again.observations(first.id)
        assert len(seen) == 2 and all(o.at.tzinfo is not None for o in seen)
        assert list(again.records(since=AWARE)) == [record]  # aware against aware


def test_a_bundle_line_with_a_naive_time_is_refused_and_nothing_is_written(
    tmp_path: Path, disk: ad.DiskStore
) -> None:
    with ad.DiskStore(tmp_path / "source") as source:
        ad.Toolkit(source, session="s").record("t", {}, b"x", determinism="deterministic")
        with (tmp_path / "good.jsonl").open("wb") as out:
            ad.export_bundle(source, out)
    lines = (tmp_path / "good.jsonl").read_text().splitlines()
    entry = json.loads(lines[1])
    assert entry["record"]["observed_at"].endswith("Z")  # exported aware
    entry["record"]["observed_at"] = "2026-03-11T09:00:00"
    lines[1] = json.dumps(entry)
    (tmp_path / "naive.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises((ValidationError, ad.BundleError), match="timezone"):
        ad.import_bundle(disk, tmp_path / "naive.jsonl")
    assert list(disk.records()) == []
    assert ad.import_bundle(disk, tmp_path / "good.jsonl").records == 1


# -- the state document -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("seen_at", "supported"),
    [
        pytest.param("2026-03-11T10:05:00+00:00", True, id="after-same-offset"),
        pytest.param("2026-03-11T10:05:00Z", True, id="after-written-Z"),
        pytest.param("2026-03-11T11:30:00+02:00", False, id="before-though-it-reads-later"),
        pytest.param("2026-03-11T09:30:00-01:00", True, id="after-though-it-reads-earlier"),
        pytest.param("yesterday", False, id="not-a-time"),
    ],
)
def test_a_hypothesis_is_supported_only_by_an_observation_after_its_action(
    seen_at: str, supported: bool
) -> None:
    document = ad.StateDocument(
        task=ad.Task(text="fix it", items=["fix"]),
        open=[ad.OpenItem(item="fix", blocked_on="checking")],
        actions=[
            ad.StateAction(
                id="a1",
                operation="deploy",
                outcome=ad.Outcome.COMPLETED,
                observed_at="2026-03-11T10:00:00+00:00",
            )
        ],
        observations=[
            ad.StateObservation(id="o1", source="health", value="up", observed_at=seen_at)
        ],
        hypotheses=[
            ad.Hypothesis(
                id="h1", claim="it works", based_on=["o1"], status="confirmed", depends_on="a1"
            )
        ],
    )
    kinds = [p.kind for p in document.problems()]
    assert kinds == ([] if supported else ["unsupported_hypothesis"])


def test_a_time_without_an_offset_in_a_document_is_read_as_utc() -> None:
    document = ad.StateDocument(
        task=ad.Task(text="fix it", items=["fix"]),
        open=[ad.OpenItem(item="fix", blocked_on="checking")],
        actions=[
            ad.StateAction(
                id="a1",
                operation="deploy",
                outcome=ad.Outcome.COMPLETED,
                observed_at="2026-03-11T10:00:00+01:00",  # 09:00 UTC
            )
        ],
        observations=[
            ad.StateObservation(id="o1", source="h", value="up", observed_at="2026-03-11T09:30:00")
        ],
        hypotheses=[
            ad.Hypothesis(
                id="h1", claim="it works", based_on=["o1"], status="confirmed", depends_on="a1"
            )
        ],
    )
    assert document.problems() == []
