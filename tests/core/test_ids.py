from __future__ import annotations

import math

import pytest

import addressable as ad
from addressable import ids


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"b": 1, "a": [1, 2]}, b'{"a":[1,2],"b":1}', id="sorted-compact"),
        pytest.param({"z": {"y": 1, "x": 2}}, b'{"z":{"x":2,"y":1}}', id="nested-sorted"),
        pytest.param("café", '"café"'.encode(), id="utf8-not-escaped"),
        pytest.param((1, "a"), b'[1,"a"]', id="tuple-as-list"),
        pytest.param(None, b"null", id="null"),
        pytest.param(1.5, b"1.5", id="float"),
    ],
)
def test_canonical_json(value: object, expected: bytes) -> None:
    assert ids.canonical_json(value) == expected


def test_equal_dicts_in_any_order_give_the_same_bytes() -> None:
    a = {"query": "x", "limit": 10, "filters": {"lang": "en", "site": "a"}}
    b = {"filters": {"site": "a", "lang": "en"}, "limit": 10, "query": "x"}
    assert ids.canonical_args(a) == ids.canonical_args(b)


def _cycle() -> dict[str, object]:
    d: dict[str, object] = {}
    d["self"] = d
    return d


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param({"limit": math.nan}, "argument 'limit' is nan", id="nan"),
        pytest.param({"x": [1, math.inf]}, "argument 'x'[1] is inf", id="inf-nested"),
        pytest.param({"node": _cycle()}, "argument 'node'['self'] contains itself", id="cycle"),
        pytest.param({"when": object()}, "argument 'when' is of type object", id="object"),
        pytest.param({"m": {1: "a"}}, "argument 'm' has the key 1 of type int", id="int-key"),
        pytest.param({"s": {1, 2}}, "argument 's' is of type set", id="set"),
        pytest.param(
            {"q": "ab\ud800"},
            "argument 'q' holds a lone surrogate ('\\ud800' at position 2)",
            id="lone-surrogate",
        ),
        pytest.param(
            {"q": {"k": [1, "\udfff"]}},
            "argument 'q'['k'][1] holds a lone surrogate",
            id="nested-surrogate",
        ),
        pytest.param(
            {"q": {"\udc80": 1}}, "a key of argument 'q' holds a lone surrogate", id="surrogate-key"
        ),
        pytest.param({"\ud800": 1}, "an argument's name holds a lone surrogate", id="name"),
    ],
)
def test_non_json_arguments_name_the_argument(args: dict[str, object], message: str) -> None:
    with pytest.raises(ad.ArgumentError) as info:
        ids.canonical_args(args)
    assert message in str(info.value)


def test_a_lone_surrogate_in_any_json_value_is_named() -> None:
    with pytest.raises(ad.ArgumentError, match=r"^the payload\['a'\]\[0\] holds a lone"):
        ids.canonical_json({"a": ["\ud800"]}, name="the payload")
    assert ids.canonical_json({"a": ["\u00e9\U0001f600"]}) == '{"a":["é😀"]}'.encode()


def test_content_hash_is_blake3_hex() -> None:
    # The published blake3 test vector for the empty input.
    assert ids.content_hash(b"") == (
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    )


def test_result_id_is_16_hex_and_depends_on_every_field() -> None:
    base = ("fetch", b'{"url":"a"}', "a", "0" * 64)
    rid = ids.result_id(*base)
    assert len(rid) == ids.ID_LENGTH == 16
    assert int(rid, 16) >= 0
    assert ids.result_id(*base) == rid
    variants = [
        ("search", *base[1:]),
        (base[0], b'{"url":"b"}', *base[2:]),
        (*base[:2], "b", base[3]),
        (*base[:2], None, base[3]),
        (*base[:3], "1" * 64),
    ]
    assert len({ids.result_id(*v) for v in variants} | {rid}) == 6


def test_action_ids_are_fresh_per_attempt() -> None:
    base = ("write", b"{}", None, "0" * 64)
    assert ids.action_id(*base) != ids.action_id(*base)
    assert ids.action_id(*base, nonce=lambda: b"n") == ids.action_id(*base, nonce=lambda: b"n")
    assert ids.action_id(*base, nonce=lambda: b"n") != ids.result_id(*base)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "empty result id", id="empty"),
        pytest.param("abc", "too short: give at least 6", id="short"),
        pytest.param("xyz123", "is not a result id", id="not-hex"),
        pytest.param("0123456789abcdef0", "too long", id="long"),
        pytest.param("ref:abcdef", "is not a result id", id="stub-text"),
        # Sixteen characters, as long as an id, but not one.
        pytest.param("0123456789abcdeg", "is not a result id", id="full-length-not-hex"),
        pytest.param("01234567 9abcdef", "is not a result id", id="full-length-space"),
        pytest.param("0123456789abcd\u00e9f", "is not a result id", id="full-length-accent"),
    ],
)
def test_malformed_ids_raise_bad_id(text: str, message: str) -> None:
    with pytest.raises(ad.BadId) as info:
        ids.check_prefix(text)
    assert message in str(info.value)


def test_prefix_is_normalised() -> None:
    assert ids.check_prefix("  ABCDEF12 ") == "abcdef12"
    assert ids.check_prefix("0123456789ABCDEF") == "0123456789abcdef"
    assert ids.check_prefix(" 0123456789abcde") == "0123456789abcde"  # a prefix, stripped

    class Typed(str):
        pass

    normalised = ids.check_prefix(Typed("0123456789abcdef"))
    assert normalised == "0123456789abcdef" and type(normalised) is str
    with pytest.raises(ad.BadId, match="is a prefix"):
        ids.check_id("abcdef12")
