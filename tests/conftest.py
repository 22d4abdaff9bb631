from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import addressable as ad


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 3, 11, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["memory", "disk"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ad.Store]:
    """Each store implementation, fresh for the test."""
    if request.param == "memory":
        s = ad.open_store("memory://")
    else:
        s = ad.open_store(f"disk://{tmp_path / 'store'}")
    yield s
    s.close()


@pytest.fixture
def disk_store(tmp_path: Path) -> Iterator[ad.DiskStore]:
    s = ad.DiskStore(tmp_path / "store")
    yield s
    s.close()


@pytest.fixture
def kit(store: ad.Store, clock: FakeClock) -> ad.Toolkit:
    return ad.Toolkit(store, session="test", clock=clock)
