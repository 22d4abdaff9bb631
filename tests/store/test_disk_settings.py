"""DiskStore.DISKCACHE_SETTINGS are the settings its cache is opened with, so that a
diskcache.Cache a benchmark or a user opens with them compares like with like."""

from __future__ import annotations

from pathlib import Path

import diskcache
import pytest

import addressable as ad


def test_the_settings_named_are_those_the_store_keeps(tmp_path: Path) -> None:
    store = ad.DiskStore(tmp_path / "store")
    kit = ad.Toolkit(store)
    kit.record("t", {}, b"x" * 200_000, determinism="deterministic")  # a value in a file
    # Opened with no settings of its own, diskcache reads those the store wrote.
    with diskcache.Cache(str(store.directory)) as cache:
        kept = {name: getattr(cache, name) for name in ad.DiskStore.DISKCACHE_SETTINGS}
    assert kept == dict(ad.DiskStore.DISKCACHE_SETTINGS)
    assert ad.DiskStore.DISKCACHE_SETTINGS["eviction_policy"] == "none"  # gc alone removes


def test_the_settings_cannot_be_changed_in_place() -> None:
    settings = ad.DiskStore.DISKCACHE_SETTINGS
    with pytest.raises(TypeError):
        settings["cull_limit"] = 10  # type: ignore[index]
    assert settings["cull_limit"] == 0
