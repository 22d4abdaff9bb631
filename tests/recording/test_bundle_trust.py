"""Import trusts nothing: a bundle that lies about its records is refused whole.

Each test builds the forged or careless bundle an attacker or a hand edit would make, and
checks that the refusal is one line naming the line of the bundle and that nothing at all
reached the store.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from tests.helpers import FakeClock
from tests.helpers.bundles import Lines, assert_refused, bundle, read, record_lines, write


def edit_record(index: int, **fields: Any) -> Callable[[Lines], None]:
    def edit(lines: Lines) -> None:
        lines[record_lines(lines)[index]]["record"].update(fields)

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(edit_record(1, args={"url": "https://evil/", "n": 1}), id="args"),
        pytest.param(edit_record(1, key="https://evil/"), id="key"),
        pytest.param(edit_record(1, key=None), id="key-dropped"),
        pytest.param(edit_record(1, tool="shell"), id="tool"),
    ],
)
def test_a_record_whose_id_does_not_follow_from_its_content_is_refused(
    tmp_path: Path, clock: FakeClock, edit: Callable[[Lines], None]
) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit(lines)
    write(path, lines)
    number = record_lines(lines)[1] + 1
    message = assert_refused(path, ad.open_store("memory://"), rf":{number}: ")
    assert "does not follow from" in message


def test_a_record_pointing_at_another_payload_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    # The payload is genuine and in the bundle, but the record's id was made for another.
    path = bundle(tmp_path, clock)
    lines = read(path)
    first, second = (lines[i]["record"] for i in record_lines(lines)[:2])
    first["content_hash"], first["size"] = second["content_hash"], second["size"]
    write(path, lines)
    assert_refused(path, ad.open_store("memory://"), rf":{record_lines(lines)[0] + 1}: .*id")


@pytest.mark.parametrize("size", [0, 5, 10**9, -1])
def test_a_false_size_is_refused(tmp_path: Path, clock: FakeClock, size: int) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit_record(2, size=size)(lines)
    write(path, lines)
    number = record_lines(lines)[2] + 1
    assert_refused(path, ad.open_store("memory://"), rf":{number}: .*size")


def test_duplicate_ids_are_refused(tmp_path: Path, clock: FakeClock) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    at = record_lines(lines)[1]
    lines.insert(at + 1, lines[at])
    lines[-1]["records"] += 1
    write(path, lines)
    assert_refused(path, ad.open_store("memory://"), rf":{at + 2}: .*duplicate.*line {at + 1}")


@pytest.mark.parametrize(
    "make_id",
    [
        pytest.param(str.upper, id="uppercase"),
        pytest.param(lambda i: i[:15], id="short"),
        pytest.param(lambda i: i + "0", id="long"),
        pytest.param(lambda i: i[:15] + "g", id="not-hex"),
        pytest.param(lambda i: "../../" + i, id="path"),
    ],
)
def test_ids_that_are_not_16_lowercase_hex_are_refused(
    tmp_path: Path, clock: FakeClock, make_id: Callable[[str], str]
) -> None:
    path = bundle(tmp_path, clock, action=True)
    lines = read(path)
    at = next(i for i in record_lines(lines) if lines[i]["record"]["tool"] == "api")
    lines[at]["record"]["id"] = make_id(lines[at]["record"]["id"])
    write(path, lines)
    assert_refused(path, ad.open_store("memory://"), rf":{at + 1}: .*16 lowercase hex")


def test_a_genuine_action_is_imported(tmp_path: Path, clock: FakeClock) -> None:
    path = bundle(tmp_path, clock, action=True)
    store = ad.open_store("memory://")
    assert ad.import_bundle(store, path).records == 4
    action = next(store.records(tool="api"))
    assert action.outcome is ad.Outcome.COMPLETED
    assert store.read(action) == b"done"


def action_line(lines: Lines) -> int:
    return next(i for i in record_lines(lines) if lines[i]["record"]["tool"] == "api")


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"args": {"op": "refund"}}, id="args"),
        pytest.param({"key": "pay:42"}, id="key"),
        pytest.param({"nonce": "0" * 32}, id="nonce"),
        pytest.param({"nonce": None}, id="nonce-dropped"),
    ],
)
def test_an_action_whose_id_does_not_follow_from_its_nonce_is_refused(
    tmp_path: Path, clock: FakeClock, fields: dict[str, Any]
) -> None:
    # An action's id joins a random nonce; the nonce is recorded, so the id is checked.
    path = bundle(tmp_path, clock, action=True)
    lines = read(path)
    at = action_line(lines)
    lines[at]["record"].update(fields)
    write(path, lines)
    assert_refused(path, ad.open_store("memory://"), rf":{at + 1}: .*(follow|nonce)")


def test_an_action_cannot_squat_on_the_id_of_a_result_yet_to_come(
    tmp_path: Path, clock: FakeClock
) -> None:
    # A forged action under the id a public page's fetch will get: once imported, the
    # real fetch would find the id taken and replay would serve the forged payload.
    page, url = b"the real page", "https://docs.example/"
    future = ad.ids.result_id(
        "fetch", ad.ids.canonical_args({"url": url}), url, ad.ids.content_hash(page)
    )
    path = bundle(tmp_path, clock, action=True)
    lines = read(path)
    at = action_line(lines)
    lines[at]["record"]["id"] = future
    write(path, lines)
    store = ad.open_store("memory://")
    assert_refused(path, store, rf":{at + 1}: .*does not follow")
    real = ad.Toolkit(store).record(
        "fetch", {"url": url}, page, determinism="deterministic", key=url
    )
    assert real.id == future and store.read(store.get(future)) == page


def test_an_action_that_would_replace_another_record_is_refused(
    tmp_path: Path, clock: FakeClock
) -> None:
    # The store already holds an action; a bundle brings another call under its id.
    store = ad.open_store("memory://")
    held = ad.Toolkit(store, clock=clock).record(
        "api", {"op": "refund"}, b"ok", determinism="side_effect"
    )
    path = bundle(tmp_path, clock, action=True)
    lines = read(path)
    at = next(i for i in record_lines(lines) if lines[i]["record"]["tool"] == "api")
    lines[at]["record"]["id"] = held.id
    write(path, lines)
    with pytest.raises(ad.BundleError, match=rf":{at + 1}: .*{held.id}.*does not follow") as info:
        ad.import_bundle(store, path)
    assert "\n" not in str(info.value)
    assert [r.id for r in store.records()] == [held.id]
    assert len(store.observations(held.id)) == 1


@pytest.mark.parametrize("depth", [300, 100_000])
def test_nesting_too_deep_is_refused(tmp_path: Path, clock: FakeClock, depth: int) -> None:
    # 300 parses but cannot be stored; 100,000 overflows the parser itself.
    path = bundle(tmp_path, clock)
    text = path.read_bytes().splitlines(keepends=True)
    at = record_lines(read(path))[1]
    deep = "[" * depth + "]" * depth
    text[at] = re.sub(rb'"n":\d', f'"n":{deep}'.encode(), text[at])
    path.write_bytes(b"".join(text))
    assert_refused(path, ad.open_store("memory://"), rf":{at + 1}: .*nest")


def test_text_that_is_not_unicode_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    # JSON can spell a lone surrogate (\ud800); no store can write it.
    path = bundle(tmp_path, clock)
    text = path.read_bytes().splitlines(keepends=True)
    at = record_lines(read(path))[0]
    text[at] = re.sub(rb'"n":\d', rb'"n":"\\ud800"', text[at])
    path.write_bytes(b"".join(text))
    assert_refused(path, ad.open_store("memory://"), rf":{at + 1}: .*Unicode")


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(edit_record(0, observed_at="2026-03-11T09:00:00"), id="observed_at"),
        pytest.param(
            lambda lines: lines[record_lines(lines)[0]]["observations"].append(
                {"at": "2026-03-12T09:00:00", "session": "s"}
            ),
            id="observation",
        ),
    ],
)
def test_a_time_without_a_timezone_is_refused(
    tmp_path: Path, clock: FakeClock, edit: Callable[[Lines], None]
) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit(lines)
    write(path, lines)
    number = record_lines(lines)[0] + 1
    assert_refused(path, ad.open_store("memory://"), rf":{number}: .*time ?zone")


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        pytest.param({"determinism": "maybe"}, "determinism", id="enum"),
        pytest.param({"size": "big", "media_type": 3}, "size", id="two-fields"),
        pytest.param({"surprise": 1}, "surprise", id="extra"),
    ],
)
def test_a_malformed_record_is_one_line_naming_the_line(
    tmp_path: Path, clock: FakeClock, fields: dict[str, Any], named: str
) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit_record(0, **fields)(lines)
    write(path, lines)
    number = record_lines(lines)[0] + 1
    assert_refused(path, ad.open_store("memory://"), rf":{number}: malformed record: .*{named}")


def test_importing_the_same_bundle_twice_adds_nothing(tmp_path: Path, clock: FakeClock) -> None:
    source = ad.open_store("memory://")
    kit = ad.Toolkit(source, session="s", clock=clock)
    res = kit.record("t", {"q": 1}, b"one", determinism="deterministic")
    clock.advance(minutes=5)
    kit.record("t", {"q": 1}, b"one", determinism="deterministic")  # seen again
    source.pin(res.id)
    path = tmp_path / "b.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(source, f)

    target = ad.open_store(f"disk://{tmp_path / 'target'}")
    first = ad.import_bundle(target, path)
    assert (first.records, first.skipped) == (1, 0)
    before = target.observations(res.id)
    assert before == source.observations(res.id)
    again = ad.import_bundle(target, path)
    assert (again.records, again.skipped) == (0, 1)
    assert target.observations(res.id) == before
    assert target.is_pinned(res.id)
    target.close()


def test_a_sighting_the_store_lacks_is_added_once(tmp_path: Path, clock: FakeClock) -> None:
    # The same result, seen at another time in another store: that sighting is news.
    target = ad.open_store("memory://")
    mine = ad.Toolkit(target, session="here", clock=clock).record(
        "t", {}, b"same", determinism="deterministic"
    )
    clock.advance(hours=1)
    other = ad.open_store("memory://")
    ad.Toolkit(other, session="there", clock=clock).record(
        "t", {}, b"same", determinism="deterministic"
    )
    path = tmp_path / "b.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(other, f)
    for _ in range(2):
        ad.import_bundle(target, path)
    assert [(o.at, o.session) for o in target.observations(mine.id)] == [
        (clock.now - timedelta(hours=1), "here"),
        (clock.now, "there"),
    ]


def _read_of_a_price(store: ad.Store, clock: FakeClock, session: str) -> ad.Result:
    """A public read anyone can make again: the same call, the same answer, the same id."""
    kit = ad.Toolkit(store, session=session, clock=clock)
    return kit.record(
        "api",
        {"method": "GET", "url": "https://shop.example/price"},
        b'{"price": 100}',
        determinism="deterministic",
        key="GET https://shop.example/price",
        max_age=timedelta(minutes=5),
    )


@pytest.mark.parametrize(
    ("later", "taken"),
    [
        pytest.param("9999-12-30T00:00:00Z", False, id="year-9999"),
        pytest.param(timedelta(days=2), False, id="two-days-ahead"),
        pytest.param(timedelta(hours=3), True, id="within-a-day"),
    ],
)
def test_a_sighting_in_the_future_cannot_keep_a_read_fresh(
    tmp_path: Path, later: str | timedelta, taken: bool
) -> None:
    # Stale reads hold back the writes that depend on them: a stranger's bundle bringing
    # the same read, seen in the year 9999, made it fresh for ever.
    clock = FakeClock(datetime.now(UTC))
    target = ad.open_store("memory://")
    kit = ad.Toolkit(target, session="mine", clock=clock)
    price = _read_of_a_price(target, clock, "mine")
    theirs = ad.open_store("memory://")
    assert _read_of_a_price(theirs, clock, "theirs").id == price.id
    path = tmp_path / "b.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(theirs, f)
    lines = read(path)
    at = later if isinstance(later, str) else (clock.now + later).isoformat()
    lines[record_lines(lines)[0]]["observations"] = [{"at": at, "session": "x"}]
    write(path, lines)
    clock.advance(hours=2)
    with pytest.raises(ad.Stale):
        kit.require_fresh([price.id])
    before = target.observations(price.id)
    if taken:  # the clocks of two machines differ: a little ahead is not refused
        ad.import_bundle(target, path)
        assert [o.session for o in target.observations(price.id)] == ["mine", "theirs", "x"]
        return
    number = record_lines(lines)[0] + 1
    with pytest.raises(ad.BundleError, match=rf":{number}: an observation .* is in the future"):
        ad.import_bundle(target, path)
    assert target.observations(price.id) == before
    with pytest.raises(ad.Stale):
        kit.require_fresh([price.id])


def test_a_record_made_in_the_future_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    path = bundle(tmp_path, clock)
    lines = read(path)
    edit_record(1, observed_at="9999-12-30T00:00:00Z")(lines)  # not part of the id
    write(path, lines)
    number = record_lines(lines)[1] + 1
    assert_refused(path, ad.open_store("memory://"), rf":{number}: observed_at .* in the future")
