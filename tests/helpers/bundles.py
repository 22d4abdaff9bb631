"""Bundles as export writes them, read into their lines, edited by hand and written back:
what the tests of import's checks forge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import addressable as ad
from addressable.ids import canonical_json

from . import FakeClock

Lines = list[dict[str, Any]]


def bundle(tmp_path: Path, clock: FakeClock, *, action: bool = False) -> Path:
    """A bundle of three genuine records (and, if asked, one action), as export writes it."""
    store = ad.open_store("memory://")
    kit = ad.Toolkit(store, session="s", clock=clock)
    for i in range(3):
        kit.record(
            "fetch",
            {"url": f"https://x/{i}", "n": i},
            f"page {i}".encode(),
            determinism="deterministic",
            key=f"https://x/{i}",
            media_type="text/html",
        )
        clock.advance(minutes=1)
    if action:
        kit.record("api", {"op": "pay"}, b"done", determinism="side_effect", outcome="completed")
    path = tmp_path / "bundle.jsonl"
    with path.open("wb") as f:
        ad.export_bundle(store, f)
    return path


def read(path: Path) -> Lines:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def write(path: Path, lines: Lines) -> None:
    path.write_bytes(b"".join(canonical_json(line) + b"\n" for line in lines))


def record_lines(lines: Lines) -> list[int]:
    """Indexes of the record lines (a line number is the index plus one)."""
    return [i for i, line in enumerate(lines) if "record" in line]


def assert_refused(path: Path, store: ad.Store, pattern: str) -> str:
    """Import is refused with a one-line BundleError matching `pattern`; nothing written."""
    with pytest.raises(ad.BundleError, match=pattern) as info:
        ad.import_bundle(store, path)
    message = str(info.value)
    assert "\n" not in message
    assert list(store.records()) == []
    assert isinstance(store, ad.KeyValueStore)
    assert store._backend.keys("") == []  # no blob, pin or observation either
    return message
