from __future__ import annotations

import json
import subprocess
import sys

import pytest

import addressable as ad


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("hello world", 2, id="hello"),
        pytest.param("<|endoftext|>", 7, id="special-marker-as-text"),
        pytest.param("tiktoken is great!", 6, id="sentence"),
    ],
)
def test_exact_cl100k_counts(text: str, tokens: int) -> None:
    assert ad.tokens_exact() is True
    assert ad.count_tokens(text) == tokens


def test_without_the_extra_counts_are_a_documented_estimate() -> None:
    # Block tiktoken as if the `tokens` extra were not installed; the core must still import.
    code = (
        "import sys, json; sys.modules['tiktoken'] = None; "
        "import addressable as ad; "
        "print(json.dumps([ad.tokens_exact(), ad.count_tokens('hello world'), "
        "ad.count_tokens('é' * 6)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    # One token per four bytes of UTF-8, rounded up: 11 bytes -> 3, 12 bytes -> 3.
    assert json.loads(out) == [False, 3, 3]


def test_core_imports_without_optional_packages() -> None:
    code = (
        "import sys; [sys.modules.__setitem__(m, None) for m in "
        "('tiktoken', 'tiktoken_ext', 'redis', 'respx', 'hypothesis')]; "
        "import addressable, addressable.adapters; print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "ok"
