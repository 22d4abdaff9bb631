"""A store URL can carry a password: no error about the URL shows it, whether the URL
parses or not, and a URL that is not one is a one-line `StoreError`, never a ValueError
from underneath."""

from __future__ import annotations

import pytest

import addressable as ad

SECRET = "s3cr3tpw"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"redis://:{SECRET}@[bad/0", "cannot be parsed"),
        (f"rediss+x://:{SECRET}@h/0", "unknown store URL 'rediss+x://***@h/0'"),
        (f"rediss+x://user:{SECRET}@h/0", "unknown store URL"),
        (f"ftp://h/0?password={SECRET}", "unknown store URL 'ftp://h/0?…'"),
        (f"ftp://:pa/{SECRET}@h/0", "unknown store URL 'ftp://***@h/0'"),  # not encoded
        (f"redis://:{SECRET}@127.0.0.1:99999/0", "the port is not a number"),
        (f"redis://:{SECRET}@127.0.0.1:abc/0", "the port is not a number"),
        (f"rediss://:{SECRET}@127.0.0.1:-1/0", "the port is not a number"),
    ],
)
def test_a_bad_store_url_is_a_store_error_without_its_password(url: str, said: str) -> None:
    with pytest.raises(ad.StoreError) as info:
        ad.open_store(url)
    message = str(info.value)
    assert said in message and "\n" not in message
    assert SECRET not in message
