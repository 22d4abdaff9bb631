"""A Redis store URL the store cannot use (a query parameter it does not take, a
database that is not a number) is a one-line `StoreError` naming what is wrong, never a
TypeError from redis-py nor database 0 in silence, and never shows the password."""

from __future__ import annotations

import pytest

import addressable as ad
from addressable.cli import main
from addressable.core.errors import EXIT_FAILURE

SECRET = "s3cr3t-pw-9f2"


def with_password(redis_url: str) -> str:
    return redis_url.replace("redis://", f"redis://:{SECRET}@")


def refused(url: str) -> str:
    """The message of the `StoreError` that opening `url` raises."""
    with pytest.raises(ad.StoreError) as info:
        ad.open_store(url)
    message = str(info.value)
    assert "\n" not in message and SECRET not in message
    return message


@pytest.mark.parametrize(
    "query", ["bogus=1", "namespace=pw&bogus=1", "bogus=", "decode_responses=1"]
)
def test_an_unknown_query_parameter_is_named(redis_url: str, query: str) -> None:
    name = query.rpartition("&")[2].partition("=")[0]
    message = refused(f"{with_password(redis_url)}?{query}")
    assert f"unknown parameter {name!r}" in message


def test_a_tls_parameter_on_a_plain_connection_says_so(redis_url: str) -> None:
    message = refused(f"{with_password(redis_url)}?ssl_cert_reqs=zzz")
    assert "'ssl_cert_reqs' is for TLS" in message and "rediss://" in message


def test_a_value_redis_py_cannot_read_hides_a_password_in_the_query(redis_url: str) -> None:
    message = refused(f"{redis_url}?socket_timeout=abc&password={SECRET}")
    assert "socket_timeout" in message


@pytest.mark.parametrize("database", ["x", "0x1", "-1", "1/2", "%41"])
def test_a_database_that_is_not_a_number_is_named(redis_url: str, database: str) -> None:
    server = with_password(redis_url).rpartition("/")[0]
    message = refused(f"{server}/{database}")
    assert "the database" in message and "is not a number" in message


@pytest.mark.parametrize("path", ["", "/", "/0", "/3"])
def test_a_database_by_its_number_or_none_still_opens(redis_url: str, path: str) -> None:
    server = redis_url.rpartition("/")[0]
    with ad.open_store(f"{server}{path}?namespace=url-errors&socket_timeout=5") as store:
        assert store.stats().records >= 0


def test_the_cli_prints_one_line_and_exits_5(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"{with_password(redis_url)}?namespace=pw&bogus=1"
    code = main(["--store", url, "stats"])
    out, err = capsys.readouterr()
    assert code == EXIT_FAILURE and out == ""
    assert err.startswith("addressable: error: ") and err.count("\n") == 1
    assert "'bogus'" in err and SECRET not in err
