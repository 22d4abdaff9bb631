from __future__ import annotations

import io
from pathlib import Path

import pytest

import addressable as ad
from addressable.store.keys import blob_key


def exported(tmp_path: Path) -> Path:
    store = ad.open_store("memory://")
    kit = ad.Toolkit(store)
    for i in range(3):
        kit.record("t", {"i": i}, f"payload {i}".encode(), determinism="deterministic")
    path = tmp_path / "bundle.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(store, f)
    return path


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param(lambda lines: lines[:-1], "truncated: it has no end line", id="truncated"),
        pytest.param(lambda lines: lines[:-2] + lines[-1:], "counts do not match", id="short"),
        pytest.param(
            lambda lines: [b"{}\n", *lines[1:]], "not an addressable bundle", id="no-header"
        ),
        pytest.param(
            lambda lines: [*lines[:2], b"{oops\n", *lines[2:]], ":3: not JSON", id="not-json"
        ),
        pytest.param(
            lambda lines: [*lines[:-1], lines[-1], b'{"x":1}\n'],
            "content after the end line",
            id="trailing",
        ),
        pytest.param(lambda lines: [lines[0], *lines[4:]], "counts do not match", id="no-records"),
    ],
)
def test_bad_bundles_are_refused_and_write_nothing(
    tmp_path: Path, damage: object, message: str
) -> None:
    path = exported(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(damage(lines)))  # type: ignore[operator]
    store = ad.open_store("memory://")
    with pytest.raises(ad.BundleError, match=message):
        ad.import_bundle(store, path)
    assert list(store.records()) == []


def test_a_blob_that_does_not_match_its_hash_is_refused(tmp_path: Path) -> None:
    path = exported(tmp_path)
    text = path.read_text()
    import base64

    good = base64.b64encode(b"payload 1").decode()
    path.write_text(text.replace(good, base64.b64encode(b"payload X").decode()))
    store = ad.open_store("memory://")
    with pytest.raises(ad.BundleError, match="does not match its hash"):
        ad.import_bundle(store, path)
    assert list(store.records()) == []


def test_export_refuses_damaged_payloads() -> None:
    store = ad.open_store("memory://")
    res = ad.Toolkit(store).record("t", {}, b"x", determinism="deterministic")
    assert isinstance(store, ad.KeyValueStore)
    store._backend.set(blob_key(res.record.content_hash), b"y")
    with pytest.raises(ad.IntegrityError):
        ad.export_bundle(store, io.BytesIO())
