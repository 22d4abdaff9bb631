"""A bundle's token counts: never below zero, and never in place of the count the store
holds for a payload it already has (one count a payload, shared by all its records)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import addressable as ad

PAYLOAD = b"the same payload " * 50


def bundle_of(tmp_path: Path, tokens: int) -> Path:
    """A bundle of one new record, of `PAYLOAD`, whose count reads `tokens`."""
    source = ad.open_store("memory://")
    made = ad.Toolkit(source).record("t", {"i": 2}, PAYLOAD, determinism="deterministic")
    source.set_tokens(made.record.content_hash, tokens)
    path = tmp_path / "bundle.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(source, f)
    return path


def test_a_bundle_does_not_change_the_count_of_a_payload_the_store_has(tmp_path: Path) -> None:
    store = ad.open_store(tmp_path / "store")
    kit = ad.Toolkit(store)
    held = kit.record("t", {"i": 1}, PAYLOAD, determinism="deterministic")
    counted = kit.tokens(held.id)
    summary = ad.import_bundle(store, bundle_of(tmp_path, 7))
    assert summary.records == 1
    assert store.get(held.id).tokens == counted
    new = [r for r in store.records() if r.id != held.id]
    assert [r.tokens for r in new] == [counted]


def test_a_bundle_gives_the_count_of_a_payload_the_store_has_not_counted(
    tmp_path: Path,
) -> None:
    store = ad.open_store(tmp_path / "store")
    ad.import_bundle(store, bundle_of(tmp_path, 7))
    assert [r.tokens for r in store.records()] == [7]


def test_a_negative_count_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    store = ad.open_store(tmp_path / "store")
    kit = ad.Toolkit(store)
    held = kit.record("t", {"i": 1}, PAYLOAD, determinism="deterministic")
    counted = kit.tokens(held.id)
    path = bundle_of(tmp_path, 7)
    path.write_bytes(path.read_bytes().replace(b'"tokens":7', b'"tokens":-999999'))
    with pytest.raises(ad.BundleError, match=r":2: malformed record: tokens") as info:
        ad.import_bundle(store, path)
    assert "\n" not in str(info.value)
    assert [(r.id, r.tokens) for r in store.records()] == [(held.id, counted)]


def test_a_record_cannot_be_made_with_a_negative_count() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        ad.Record(
            id="0" * 16,
            tool="t",
            args={},
            determinism="deterministic",
            content_hash="0" * 64,
            size=0,
            media_type="text/plain",
            observed_at=datetime(2026, 3, 11, 9, tzinfo=UTC),
            tokens=-1,
        )
