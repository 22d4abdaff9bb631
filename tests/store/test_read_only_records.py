"""A record does not change once written: its args and meta refuse changes too.

A disk store keeps the records it wrote and read parsed, and hands the same record to
every later read of the same stored bytes (a replay then parses nothing). So a change a
caller makes to one record's args or meta must not reach the next reader: it is refused
with `ReadOnly`, wherever the record came from. And what a replay gives from what the
store kept is exactly what parsing the stored bytes gives.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import addressable as ad

Change = Callable[[Any], object]

DICT_CHANGES: dict[str, Change] = {
    "set": lambda d: d.__setitem__("new", 1),
    "del": lambda d: d.__delitem__(next(iter(d))),
    "update": lambda d: d.update(new=1),
    "pop": lambda d: d.pop(next(iter(d))),
    "popitem": lambda d: d.popitem(),
    "setdefault": lambda d: d.setdefault("new", 1),
    "clear": lambda d: d.clear(),
    "ior": lambda d: d.__ior__({"new": 1}),
}
LIST_CHANGES: dict[str, Change] = {
    "set": lambda v: v.__setitem__(0, "x"),
    "set-slice": lambda v: v.__setitem__(slice(0, 1), ["x", "y"]),
    "del": lambda v: v.__delitem__(0),
    "append": lambda v: v.append("x"),
    "extend": lambda v: v.extend(["x"]),
    "insert": lambda v: v.insert(0, "x"),
    "pop": lambda v: v.pop(),
    "remove": lambda v: v.remove(v[0]),
    "clear": lambda v: v.clear(),
    "sort": lambda v: v.sort(),
    "reverse": lambda v: v.reverse(),
    "iadd": lambda v: v.__iadd__(["x"]),
    "imul": lambda v: v.__imul__(2),
}

ARGS = {"path": "/a", "lines": [1, 2], "opts": {"depth": [3]}}
META = {"final_url": "https://x/a", "hits": ["a", "b"], "nested": {"k": [{"v": 1}]}}


def _kit(tmp_path: Path) -> ad.Toolkit:
    return ad.Toolkit(ad.DiskStore(tmp_path / "store"), session="s")


def _records(tmp_path: Path) -> dict[str, ad.Record]:
    """The same record got each way a caller gets one."""
    kit = _kit(tmp_path)
    written = kit.record("t", ARGS, b"x", determinism="deterministic", key="k", meta=META)
    replayed = kit.replay(written.id).record  # kept parsed by the store that wrote it
    with ad.DiskStore(tmp_path / "store") as other:  # parsed afresh
        cold = ad.Toolkit(other).replay(written.id).record
    in_memory = ad.Toolkit(ad.MemoryStore())
    memory = in_memory.record("t", ARGS, b"x", determinism="deterministic", meta=META)
    return {
        "written": written.record,
        "replayed": replayed,
        "cold": cold,
        "listed": next(iter(kit.store.records(key="k"))),
        "memory-store": in_memory.replay(memory.id).record,
        "validated": ad.Record.model_validate_json(written.record.model_dump_json()),
        "built": ad.Record(**written.record.model_dump()),
    }


@pytest.mark.parametrize("change", DICT_CHANGES.values(), ids=DICT_CHANGES.keys())
def test_a_records_args_and_meta_refuse_every_change(tmp_path: Path, change: Change) -> None:
    for how, record in _records(tmp_path).items():
        for name, value in (("args", record.args), ("meta", record.meta)):
            before = json.dumps(value)
            with pytest.raises(ad.ReadOnly) as raised:
                change(value)
            assert isinstance(raised.value, TypeError), how
            assert json.dumps(value) == before, (how, name)
        with pytest.raises(ad.ReadOnly):
            change(record.meta["nested"])


@pytest.mark.parametrize("change", LIST_CHANGES.values(), ids=LIST_CHANGES.keys())
def test_the_lists_in_them_refuse_every_change(tmp_path: Path, change: Change) -> None:
    for how, record in _records(tmp_path).items():
        for value in (record.args["lines"], record.meta["hits"], record.meta["nested"]["k"]):
            before = json.dumps(value)
            with pytest.raises(ad.ReadOnly):
                change(value)
            assert json.dumps(value) == before, how


def test_a_refused_change_does_not_reach_the_next_replay(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", ARGS, b"x", determinism="deterministic", meta=META)
    for _ in range(2):
        replayed = kit.replay(res.id).record
        with pytest.raises(ad.ReadOnly):
            replayed.meta["hits"].append("mine")
        with pytest.raises(ad.ReadOnly):
            replayed.args["opts"]["depth"] = []
    again = kit.replay(res.id).record
    assert again.meta == META and again.args == ARGS


def test_they_still_read_copy_and_pickle_as_plain_json(tmp_path: Path) -> None:
    record = _records(tmp_path)["replayed"]
    assert isinstance(record.args, dict) and isinstance(record.meta["hits"], list)
    assert record.args == ARGS and record.meta == META
    assert json.loads(json.dumps(record.meta)) == META
    assert repr(record.meta) == repr(META)
    assert record.model_dump()["meta"] == META
    mine = dict(record.meta)  # a copy changes
    mine["hits"] = [*record.meta["hits"], "c"]
    assert record.meta["hits"] == ["a", "b"]
    for twin in (copy.copy(record), copy.deepcopy(record), pickle.loads(pickle.dumps(record))):
        assert twin == record and twin.meta == META
        with pytest.raises(ad.ReadOnly):
            twin.meta["nested"]["k"].append(1)
    deep = record.model_copy(deep=True)
    assert deep == record
    assert (
        ad.Result.model_validate_json(
            ad.Result(record=record, payload=b"x").model_dump_json()
        ).record
        == record
    )


def _warm_and_cold(tmp_path: Path, kit: ad.Toolkit, rid: str) -> tuple[ad.Record, ad.Record]:
    warm = kit.replay(rid).record
    with ad.DiskStore(tmp_path / "store") as other:
        return warm, ad.Toolkit(other).replay(rid).record


def _same(warm: ad.Record, cold: ad.Record) -> None:
    """A record a store kept parsed is the one parsing its stored bytes gives."""
    assert warm == cold and warm.model_fields_set == cold.model_fields_set
    assert warm.model_dump_json() == cold.model_dump_json()
    assert warm.model_dump(exclude_unset=True) == cold.model_dump(exclude_unset=True)
    assert repr(warm) == repr(cold)  # the time zone object included


def test_a_replay_from_what_the_store_kept_is_what_parsing_gives(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    made = [
        kit.record("t", {"n": 1}, b"plain", determinism="deterministic"),
        kit.record("t", ARGS, b"meta", determinism="deterministic", key="k", meta=META),
        kit.record("t", {}, b"aged", determinism="deterministic", max_age=timedelta(hours=2)),
        kit.record(
            "deploy",
            {"target": "prod"},
            b"done",
            determinism="side_effect",
            outcome=ad.Outcome.COMPLETED,
            idempotency_key="ik-1",
        ),
        kit.record("t", {"q": "x"}, b"err", determinism="nondeterministic", error="E: no"),
        kit.record("t", {"big": "y" * 20_000}, b"large args", determinism="deterministic"),
    ]
    kit.tokens(made[0].id)  # a count stored after the write
    for res in made:
        _same(*_warm_and_cold(tmp_path, kit, res.id))
    assert kit.replay(made[0].id).record.tokens == kit.tokens(made[0].id)


def test_a_token_count_stored_by_another_process_shows_on_the_next_replay(
    tmp_path: Path,
) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {}, b"some words to count", determinism="deterministic")
    assert kit.replay(res.id).record.tokens is None
    with ad.DiskStore(tmp_path / "store") as other:
        counted = ad.Toolkit(other).tokens(res.id)
    assert kit.replay(res.id).record.tokens == counted > 0


def test_a_record_written_in_a_zone_with_a_clock_change_replays_as_parsed(
    tmp_path: Path,
) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    before_the_change = datetime(2026, 3, 29, 1, 30, tzinfo=berlin)  # 02:00 -> 03:00
    kit = ad.Toolkit(ad.DiskStore(tmp_path / "store"), session="s", clock=lambda: before_the_change)
    res = kit.record("t", {}, b"x", determinism="deterministic", max_age=timedelta(hours=1))
    warm, cold = _warm_and_cold(tmp_path, kit, res.id)
    _same(warm, cold)
    assert warm.observed_at + timedelta(hours=1) == cold.observed_at + timedelta(hours=1)
    assert (warm.observed_at + timedelta(hours=1)).isoformat() == (
        cold.observed_at + timedelta(hours=1)
    ).isoformat()


def test_a_record_whose_fields_pydantic_converted_replays_as_parsed(tmp_path: Path) -> None:
    kit = _kit(tmp_path)
    meta: dict[str, Any] = {"pair": (1, 2), "at": datetime(2026, 1, 1, tzinfo=UTC)}
    res = kit.record("t", {}, b"x", determinism="deterministic", meta=meta)
    warm, cold = _warm_and_cold(tmp_path, kit, res.id)
    _same(warm, cold)
    assert json.dumps(warm.meta) == json.dumps(cold.meta)


def test_a_record_put_by_hand_is_kept_as_its_bytes_say_not_as_the_caller_holds_it(
    tmp_path: Path,
) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {"n": 1}, b"x", determinism="deterministic")
    store = kit.store
    theirs: dict[str, Any] = {"hits": ["a"]}
    record = res.record.model_copy(update={"id": "0" * 16, "meta": theirs})
    store.put(record, b"x")
    theirs["hits"].append("changed after the put")
    warm, cold = _warm_and_cold(tmp_path, kit, record.id)
    _same(warm, cold)
    assert warm.meta == {"hits": ["a"]}


def test_a_rerun_gives_the_users_function_arguments_it_may_change(tmp_path: Path) -> None:
    kit = _kit(tmp_path)

    @kit.tool(determinism="deterministic")
    def tally(names, opts: dict) -> str:  # type: ignore[no-untyped-def]
        names.sort()
        opts["paths"].append("seen")
        return ",".join(names) + ";" + ",".join(opts["paths"])

    res = tally(["b", "a"], {"paths": ["p"]})
    again = kit.replay(res.id, verify=True)
    assert again.payload == res.payload == b"a,b;p,seen"
    assert again.changed is False
    assert kit.replay(res.id).record.args == {"names": ["b", "a"], "opts": {"paths": ["p"]}}


def test_a_frozen_container_is_not_filled_again_and_rebuilds_through_its_type() -> None:
    record = ad.Record.model_validate_json(
        ad.Toolkit(ad.MemoryStore())
        .record("t", {"a": [1]}, b"x", determinism="deterministic", meta={"m": 1})
        .record.model_dump_json()
    )
    record.meta.__init__(m=2)  # type: ignore[misc]  # as a tuple's: changes nothing
    record.args["a"].__init__([9])
    assert record.meta == {"m": 1} and record.args == {"a": [1]}

    @dataclasses.dataclass
    class Holder:
        args: dict[str, Any]

    # Generic code rebuilds a container through its type: it can.
    assert dataclasses.asdict(Holder(record.args)) == {"args": {"a": [1]}}
    rebuilt = type(record.args)({"b": 2})
    assert rebuilt == {"b": 2}
    with pytest.raises(ad.ReadOnly):
        rebuilt["c"] = 3


def test_a_content_hash_not_written_as_hashes_are_is_refused_on_every_read(
    tmp_path: Path,
) -> None:
    kit = _kit(tmp_path)
    res = kit.record("t", {}, b"x", determinism="deterministic")
    shouting = res.record.model_copy(
        update={"id": "1" * 16, "content_hash": res.record.content_hash.upper()}
    )
    kit.store.put(shouting, b"x")
    for _ in range(2):  # parsed, then kept parsed
        with pytest.raises(ad.IntegrityError):
            kit.replay(shouting.id)
    with ad.DiskStore(tmp_path / "store") as other, pytest.raises(ad.IntegrityError):
        ad.Toolkit(other).replay(shouting.id)


def test_what_a_store_keeps_parsed_is_bounded_by_its_bytes(tmp_path: Path) -> None:
    from addressable.store import parsed as _parsed

    kit = _kit(tmp_path)
    for n in range(3 * _parsed.TOTAL // _parsed.LARGEST):
        kit.record(
            "t", {"n": n, "pad": "p" * (_parsed.LARGEST - 600)}, b"x", determinism="deterministic"
        )
    store = kit.store
    assert isinstance(store, ad.KeyValueStore)
    kept = store._parsed._kept.values()
    assert 0 < sum(len(k[0]) for k in kept) <= _parsed.TOTAL
    store.close()
    assert not store._parsed._kept


def test_setting_a_field_of_a_record_or_a_result_is_read_only() -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    result = kit.record("t", {"q": 1}, b"x", determinism="deterministic", key="k")
    for obj, field in ((result.record, "key"), (result.record, "status"), (result, "payload")):
        with pytest.raises(ad.ReadOnly, match=f"{field} cannot be set"):
            setattr(obj, field, "z")
    assert result.record.key == "k" and result.payload == b"x"
    assert result.model_copy(update={"changed": True}).changed is True
