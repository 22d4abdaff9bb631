"""A side effect is never lost: once an action has run, a record of it exists, whatever
its return value, its key function or its arguments did. What can be checked before the
call (arguments, key) is checked before it, so that a bad call never runs at all."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Memory
from tests.helpers import FakeClock


@pytest.fixture
def kit(tmp_path: Path, clock: FakeClock) -> ad.Toolkit:
    return ad.Toolkit(ad.DiskStore(tmp_path / "store"), session="safety", clock=clock)


def stored(tmp_path: Path, tool: str) -> list[ad.Record]:
    """The records of `tool`, read back by a store opened afresh on the same folder."""
    with ad.DiskStore(tmp_path / "store") as again:
        return list(again.records(tool=tool))


UNSTORABLE = [
    pytest.param(object(), "of type object", id="object"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param({1, 2}, "of type set", id="set"),
    pytest.param("\ud800", "surrogate", id="lone-surrogate"),
    pytest.param({"a": ["\udfff"]}, "surrogate", id="nested-surrogate"),
    pytest.param({"\ud800": 1}, "surrogate", id="surrogate-in-a-key"),
]


@pytest.mark.parametrize(("value", "detail"), UNSTORABLE)
def test_an_action_whose_return_value_cannot_be_stored_is_recorded(
    kit: ad.Toolkit, tmp_path: Path, value: Any, detail: str
) -> None:
    ran = []

    @kit.tool(determinism="side_effect")
    def deploy(target: str) -> Any:
        ran.append(target)
        return value

    with pytest.raises(ad.ArgumentError, match="return value") as info:
        deploy("prod")
    assert ran == ["prod"]
    assert info.value.__cause__ is not None  # the encoding failure, chained
    assert "\n" not in str(info.value)
    (record,) = stored(tmp_path, "deploy")
    assert record.args == {"target": "prod"}
    assert (record.status, record.outcome) == (ad.Status.ERROR, ad.Outcome.UNKNOWN)
    assert record.error is not None and "return value could not be stored" in record.error
    assert detail in record.error
    assert record.id in str(info.value)
    assert kit.outcome(record.id) is ad.Outcome.UNKNOWN


@pytest.mark.parametrize(("value", "detail"), UNSTORABLE)
def test_an_async_action_whose_return_value_cannot_be_stored_is_recorded(
    kit: ad.Toolkit, tmp_path: Path, value: Any, detail: str
) -> None:
    ran = []

    @kit.tool(determinism="side_effect")
    async def deploy(target: str) -> Any:
        ran.append(target)
        return value

    with pytest.raises(ad.ArgumentError, match="return value"):
        asyncio.run(deploy("prod"))
    assert ran == ["prod"]
    (record,) = stored(tmp_path, "deploy")
    assert (record.status, record.outcome) == (ad.Status.ERROR, ad.Outcome.UNKNOWN)
    assert record.error is not None and detail in record.error


@pytest.mark.parametrize(("value", "detail"), UNSTORABLE)
def test_a_read_whose_return_value_cannot_be_stored_is_recorded_as_an_error(
    kit: ad.Toolkit, tmp_path: Path, value: Any, detail: str
) -> None:
    ran = []

    @kit.tool(determinism="nondeterministic")
    def lookup(query: str) -> Any:
        ran.append(query)
        return value

    with pytest.raises(ad.ArgumentError, match="return value"):
        lookup("q")
    assert ran == ["q"]
    (record,) = stored(tmp_path, "lookup")
    assert (record.status, record.outcome) == (ad.Status.ERROR, None)
    assert record.error is not None and detail in record.error


def test_an_action_that_raises_with_a_lone_surrogate_is_recorded(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    ran = []

    @kit.tool(determinism="side_effect")
    def deploy(target: str) -> str:
        ran.append(target)
        raise RuntimeError("half done \ud800")

    with pytest.raises(RuntimeError, match="half done"):  # the tool's own error, as raised
        deploy("prod")
    assert ran == ["prod"]
    (record,) = stored(tmp_path, "deploy")
    assert (record.status, record.outcome) == (ad.Status.ERROR, ad.Outcome.UNKNOWN)
    assert record.error is not None and record.error.startswith("RuntimeError: half done ")


BAD_KEYS: list[Any] = [
    pytest.param(lambda target: 5, "returned 5", id="int"),
    pytest.param(lambda target: b"k", "returned b'k'", id="bytes"),
    pytest.param(lambda target: ["k"], "of type list", id="list"),
    pytest.param(lambda target: "k\ud800", "surrogate", id="lone-surrogate"),
]


@pytest.mark.parametrize(("key", "detail"), BAD_KEYS)
def test_a_bad_key_refuses_the_action_before_it_runs(
    kit: ad.Toolkit, tmp_path: Path, key: Callable[[str], Any], detail: str
) -> None:
    ran = []

    @kit.tool(determinism="side_effect", key=key)
    def deploy(target: str) -> str:
        ran.append(target)
        return "done"

    with pytest.raises(ad.ArgumentError, match="key") as info:
        deploy("prod")
    assert detail in str(info.value) and "'deploy'" in str(info.value)
    assert ran == []
    assert stored(tmp_path, "deploy") == []


@pytest.mark.parametrize(("key", "detail"), BAD_KEYS)
def test_a_bad_key_refuses_an_async_action_before_it_runs(
    kit: ad.Toolkit, tmp_path: Path, key: Callable[[str], Any], detail: str
) -> None:
    ran = []

    @kit.tool(determinism="side_effect", key=key)
    async def deploy(target: str) -> str:
        ran.append(target)
        return "done"

    with pytest.raises(ad.ArgumentError, match=detail.replace("[", "\\[")):
        asyncio.run(deploy("prod"))
    assert ran == []
    assert stored(tmp_path, "deploy") == []


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("\ud800", id="lone-surrogate"),
        pytest.param(["ok", {"deep": "x\udc80"}], id="nested-surrogate"),
        pytest.param({"\ud800": 1}, id="surrogate-in-a-key"),
    ],
)
def test_arguments_with_a_lone_surrogate_refuse_the_action_before_it_runs(
    kit: ad.Toolkit, tmp_path: Path, target: Any
) -> None:
    ran = []

    @kit.tool(determinism="side_effect")
    def deploy(target: Any) -> str:
        ran.append(target)
        return "done"

    with pytest.raises(ad.ArgumentError, match=r"argument 'target'.*surrogate"):
        deploy(target)
    assert ran == []
    assert stored(tmp_path, "deploy") == []


def test_a_model_call_with_an_unstorable_argument_changes_nothing(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    # JSON can spell a lone surrogate ("\ud800"): a model's arguments can carry one. The
    # arguments are checked before the change, so the file is never written.
    memory = Memory(kit, tmp_path / "memories")
    arguments = '{"command": "create", "path": "/memories/a.txt", "file_text": "hi\\ud800"}'
    text = kit.handle("memory", arguments)
    assert not (tmp_path / "memories" / "a.txt").exists()
    assert text.startswith("error: ArgumentError") and "surrogate" in text
    assert stored(tmp_path, memory.name) == []


def test_a_change_that_fails_half_way_is_recorded_unknown(kit: ad.Toolkit, tmp_path: Path) -> None:
    # Writing text that cannot be encoded fails after the file was opened (and emptied):
    # the change may have happened in part, so it is recorded with outcome unknown.
    memory = Memory(kit, tmp_path / "memories")
    memory("create", path="/memories/a.txt", file_text="before")
    broken = RuntimeError("the disk went away")

    def change() -> tuple[str, dict[str, Any] | None]:
        (tmp_path / "memories" / "a.txt").write_text("")
        raise broken

    with pytest.raises(RuntimeError) as info:
        memory.act({"command": "create", "path": "/memories/a.txt"}, change, (OSError,))
    assert info.value is broken  # the caller gets the exception unchanged
    records = [r for r in stored(tmp_path, memory.name) if r.status is ad.Status.ERROR]
    (record,) = records
    assert record.outcome is ad.Outcome.UNKNOWN
    assert record.error is not None and "the disk went away" in record.error


def test_kit_record_of_an_action_with_unstorable_fields_still_records_it(
    kit: ad.Toolkit, tmp_path: Path
) -> None:
    with pytest.raises(ad.ArgumentError, match="could not be stored") as info:
        kit.record(
            "api",
            {"url": "https://x/", "body": {"n": math.inf}},
            b'{"ok": true}',
            determinism="side_effect",
            outcome=ad.Outcome.COMPLETED,
            key="POST https://x/\ud800",
            meta={"when": object()},
        )
    (record,) = stored(tmp_path, "api")
    assert str(info.value).count(record.id) == 1
    assert (record.status, record.outcome) == (ad.Status.ERROR, ad.Outcome.UNKNOWN)
    assert record.args == {"url": "https://x/", "body": {"n": "inf"}}
    assert record.key == "POST https://x/\\ud800"
    assert kit.replay(record.id).payload == b'{"ok": true}'  # the response is kept


def test_storable_actions_are_unchanged(kit: ad.Toolkit, tmp_path: Path) -> None:
    @kit.tool(determinism="side_effect", key=lambda target: f"deploy:{target}")
    def deploy(target: str) -> dict[str, str]:
        return {"deployed": target}

    res = deploy("prod")
    assert (res.record.status, res.record.outcome) == (ad.Status.OK, ad.Outcome.COMPLETED)
    assert res.record.key == "deploy:prod" and res.content == {"deployed": "prod"}
    assert [r.id for r in stored(tmp_path, "deploy")] == [res.id]
