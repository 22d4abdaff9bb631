"""What a record cannot hold is refused before a call runs: a value nested past
`ids.MAX_DEPTH` levels (the store's writer stops there), an integer Python will not write
in digits, a name that is not a string. The answer is the library's `ArgumentError`, one
line; nothing ran, was sent or was recorded."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.adapters import Api, Identity, Scope
from addressable.ids import MAX_DEPTH
from tests.helpers.httpserver import LocalServer, Reply

DEEPER = f"nests lists and objects more than {MAX_DEPTH} levels deep, which a record cannot hold"


def nested(levels: int) -> Any:
    """`levels` levels of objects with a number in the last: the number is a level too."""
    value: Any = 1
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_max_depth_is_what_every_store_holds(store: ad.Store) -> None:
    kit = ad.Toolkit(store, session="s")
    deepest = kit.record("t", {"v": nested(MAX_DEPTH)}, b"x", determinism="deterministic")
    assert kit.get(deepest.id).args == {"v": nested(MAX_DEPTH)}
    # One level more, and the store could not write the record: refused before.
    with pytest.raises(ad.ArgumentError, match=f"^argument 'v' {DEEPER}$"):
        ad.ids.canonical_args({"v": nested(MAX_DEPTH + 1)})
    record = deepest.record.model_copy(
        update={"id": "0" * 16, "args": {"v": nested(MAX_DEPTH + 1)}}
    )
    with pytest.raises(ad.ArgumentError, match="cannot be stored"):
        store.put(record, b"x")


@pytest.fixture
def payments(server: LocalServer) -> LocalServer:
    server.routes[("POST", "/pay")] = lambda request: Reply(
        200, b'{"charged": true}', {"Content-Type": "application/json"}
    )
    return server


def api_of(kit: ad.Toolkit, server: LocalServer) -> Api:
    scope = Scope(origins=(server.url(),), actions=frozenset({"read", "write"}))
    return Api(kit, identities=[Identity(name="me")], scope=scope)


def test_an_api_write_a_record_cannot_hold_is_not_sent(
    disk_kit: ad.Toolkit, payments: LocalServer
) -> None:
    # Sent, then not recorded, its answer was lost: an error whose outcome is unknown.
    api = api_of(disk_kit, payments)
    url = payments.url("/pay")
    body = '{"a":' * 300 + "1" + "}" * 300
    out = disk_kit.handle("api", f'{{"method":"POST","url":"{url}","identity":"me","body":{body}}}')
    assert out == f"error: ArgumentError: the body {DEEPER}"
    with pytest.raises(ad.ArgumentError, match=f"^the body {DEEPER}$"):
        api.post(url, identity="me", json_body=nested(MAX_DEPTH + 1))
    assert payments.requests == []
    assert list(disk_kit.store.records()) == []
    # At the limit, it is sent and recorded whole.
    sent = api.post(url, identity="me", json_body=nested(MAX_DEPTH))
    assert len(payments.requests) == 1
    assert sent.record.outcome is ad.Outcome.COMPLETED
    assert disk_kit.get(sent.id).args["body"] == nested(MAX_DEPTH)


def test_arguments_nested_near_the_parser_s_limit_are_an_argument_error(
    disk_kit: ad.Toolkit, payments: LocalServer
) -> None:
    ran: list[object] = []

    @disk_kit.tool(determinism="side_effect")
    def charge(spec: dict[str, Any]) -> str:
        ran.append(spec)
        return "charged"

    api_of(disk_kit, payments)
    url = payments.url("/pay")
    # As objects, past Python's stack: the checks recursed into RecursionError.
    assert disk_kit.handle("charge", {"spec": nested(5000)}) == (
        f"error: charge: argument 'spec' {DEEPER}"
    )
    api_call = {"method": "POST", "url": url, "identity": "me", "body": nested(5000)}
    assert disk_kit.handle("api", api_call) == f"error: ArgumentError: the body {DEEPER}"
    # As a JSON string, as the OpenAI APIs give arguments: at some depth near its limit
    # the parser reads it and the checks after it (deeper in the stack) ran out of room.
    for depth in range(sys.getrecursionlimit() - 100, sys.getrecursionlimit() + 1, 2):
        deep = '{"a":' * depth + "1" + "}" * depth
        for name, arguments in [
            ("charge", f'{{"spec":{deep}}}'),
            ("api", f'{{"method":"POST","url":"{url}","identity":"me","body":{deep}}}'),
        ]:
            out = disk_kit.handle(name, arguments)
            assert out in (
                f"error: charge: argument 'spec' {DEEPER}",
                f"error: ArgumentError: the body {DEEPER}",
                "error: the arguments are nested too deeply; send a flat JSON object",
            ), (depth, out)
    assert ran == [] and payments.requests == [] and list(disk_kit.store.records()) == []


def test_json_nested_past_python_s_stack_is_an_argument_error() -> None:
    with pytest.raises(ad.ArgumentError, match=r"^the payload nests lists and objects too deep"):
        ad.ids.canonical_json(nested(5000), name="the payload")


def test_an_integer_too_long_to_write_and_a_name_that_is_not_a_string(
    disk_kit: ad.Toolkit,
) -> None:
    ran: list[object] = []

    @disk_kit.tool(determinism="nondeterministic")
    def f(n: int = 0, **extra: Any) -> str:
        ran.append(n)
        return "ok"

    digits = sys.get_int_max_str_digits()
    out = disk_kit.handle("f", {"n": 10**digits})
    assert out == (
        f"error: f: argument 'n' is an integer of more than {digits:,} digits, not written as JSON"
    )
    out = disk_kit.handle("f", {"n": 1, "more": {"x": [2, -(10**digits)]}})
    assert out.startswith("error: f: argument 'more'['x'][1] is an integer of more")
    out = disk_kit.handle("f", {1: "x", "n": 2})
    assert out == "error: f: an argument's name is '1' of type int; names are strings"
    assert ran == [] and list(disk_kit.store.records()) == []


def test_a_record_at_the_limit_is_exported_and_imported(tmp_path: Any) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"), session="s")
    deepest = kit.record("t", {"v": nested(MAX_DEPTH)}, b"x", determinism="deterministic")
    path = tmp_path / "bundle.jsonl"
    with path.open("wb") as out:
        ad.export_bundle(kit.store, out)
    other = ad.open_store("memory://")
    assert ad.import_bundle(other, path).records == 1
    assert other.get(deepest.id).args == {"v": nested(MAX_DEPTH)}
    assert other.get(deepest.id).observed_at <= datetime.now(UTC)


def test_an_adapter_told_an_integer_too_long_to_show_answers_in_one_line(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    from addressable.adapters import Shell

    Shell(disk_kit, cwd=tmp_path)
    out = disk_kit.handle("shell", {"command": 10 ** (sys.get_int_max_str_digits() + 5)})
    assert out == (
        "error: shell: argument 'command' does not fit: Input should be a valid string "
        "(got an integer of too many digits to show)"
    )
    assert list(disk_kit.store.records()) == []
