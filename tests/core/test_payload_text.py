"""One text-or-binary test serves the replay tool, the CLI and the files adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

import addressable as ad


@pytest.mark.parametrize(
    ("payload", "media_type", "expected"),
    [
        pytest.param(b"plain", None, "plain", id="utf8-untyped"),
        pytest.param(b"nul\x00byte", None, None, id="nul-untyped"),
        pytest.param(b"nul\x00byte", "application/octet-stream", None, id="nul-binary-type"),
        pytest.param(b"nul\x00byte", "text/plain; charset=utf-8", "nul\x00byte", id="nul-text"),
        pytest.param(b"\x89PNG\x00\xff", None, None, id="png"),
        pytest.param(b"\xff\xfe", "text/plain", None, id="text-type-not-utf8"),
        pytest.param(b"caf\xe9", "text/html; charset=ISO-8859-1", "café", id="latin1"),
        pytest.param(b'{"a": 1}', "application/vnd.api+json", '{"a": 1}', id="json-suffix"),
        pytest.param(b"ok", "text/plain; charset=no-such-charset", "ok", id="unknown-charset"),
        pytest.param(b"\xff", "text/plain; charset=no-such-charset", None, id="unknown-bad"),
        # Codecs that are no charset: read as UTF-8, never an error.
        pytest.param(b"a\xc3\xa9", "text/html; charset=idna", "a\xe9", id="idna"),
        pytest.param(b"ok", "text/html; charset=undefined", "ok", id="undefined"),
        pytest.param(b"caf\xc3\xa9", "text/html; charset=punycode", "caf\xe9", id="punycode"),
        pytest.param(b"b2s=", "text/plain; charset=base64", "b2s=", id="bytes-codec"),
    ],
)
def test_payload_text(payload: bytes, media_type: str | None, expected: str | None) -> None:
    assert ad.payload_text(payload, media_type) == expected


@pytest.mark.parametrize(
    ("payload", "media_type", "readable"),
    [
        pytest.param(b"caf\xe9 au lait", "text/plain", "caf\ufffd au lait", id="latin1-in-utf8"),
        pytest.param(b"a.py\x00b.py\x00", None, "a.py\x00b.py\x00", id="nuls-between-names"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", None, None, id="png"),
        pytest.param(b"plain", None, "plain", id="exact-text"),
    ],
)
def test_what_a_model_reads_as_text_is_the_same_test_read_leniently(
    payload: bytes, media_type: str | None, readable: str | None
) -> None:
    # Exact text is text either way; text with a stray byte is text only to read.
    exact = ad.payload_text(payload, media_type)
    assert ad.payload_text(payload, media_type, readable=True) == readable
    assert exact is None or exact == readable
    # and the replay tool shows a model what the lenient reading gives
    kit = ad.Toolkit(ad.open_store("memory://"))
    result = kit.record(
        "t",
        {},
        payload,
        media_type=media_type or "application/octet-stream",
        determinism="deterministic",
    )
    shown = kit.handle("replay_result", {"id": result.id})
    assert shown == readable if readable is not None else shown.startswith("[binary content:")


def test_the_files_adapter_types_what_it_reads_with_the_same_test(tmp_path: Path) -> None:
    from addressable.adapters import Files

    root = tmp_path
    (root / "text.txt").write_bytes(b"hello\n")
    (root / "nul.bin").write_bytes(b"a\x00b")
    files = Files(ad.Toolkit(ad.open_store("memory://")), root)
    assert files.read("text.txt").record.media_type == "text/plain; charset=utf-8"
    assert files.read("nul.bin").record.media_type == "application/octet-stream"


@pytest.mark.parametrize("body", [b"", b"{not json", b"[" * 100_000])
def test_a_result_that_says_json_and_is_not_gives_its_text(body: bytes) -> None:
    kit = ad.Toolkit(ad.open_store("memory://"))
    result = kit.record(
        "api", {"url": "u"}, body, determinism="nondeterministic", media_type="application/json"
    )
    assert result.content == body.decode()
    assert kit.replay(result.id).content == body.decode()
