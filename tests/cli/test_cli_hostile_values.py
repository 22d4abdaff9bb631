"""Values a user (or a model driving the CLI) can give that no store can hold: each is a
one-line usage error naming what is wrong, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

import addressable as ad
from addressable.cli import main
from addressable.core.errors import EXIT_OK, EXIT_USAGE


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    path = tmp_path / "store"
    with ad.DiskStore(path) as store:
        ad.Toolkit(store).record("t", {}, b"one", determinism="deterministic")
    return str(path)


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    _, err = capsys.readouterr()
    assert exit_.value.code == EXIT_USAGE
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    return err


@pytest.mark.parametrize("limit", [str(2**63), str(10**30)])
def test_a_limit_past_what_a_store_counts_is_a_usage_error(
    store_path: str, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    err = usage_error(capsys, "ls", "--limit", limit, "--store", store_path)
    assert "too large a count" in err


def test_the_largest_limit_lists_every_record(
    store_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", "--limit", str(2**63 - 1), "--store", store_path, "--json"]) == EXIT_OK
    assert '"tool": "t"' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("since", "said"),
    [
        ("9999-12-31T23:59-01:00", "after the year 9999"),
        ("0001-01-01T00:30+01:00", "before the year 1"),
        ("999999999d", "too far back in time"),
    ],
)
def test_a_moment_past_the_calendar_says_which_end(
    store_path: str, capsys: pytest.CaptureFixture[str], since: str, said: str
) -> None:
    err = usage_error(capsys, "ls", "--since", since, "--store", store_path)
    assert said in err
