"""`open_store(url)`: one function from a URL to a store."""

from __future__ import annotations

from urllib.parse import urlsplit

from .._errors import StoreError
from ._base import Store
from ._disk import DiskStore
from ._memory import MemoryStore


def open_store(url: str | None = None) -> Store:
    """Open the store a URL names.

    - None: a `DiskStore` in `$ADDRESSABLE_HOME`, or `./.addressable` when unset
    - ``memory://``: a new `MemoryStore`
    - ``disk:///abs/path``, ``disk://rel/path`` or a plain path: a `DiskStore` there
    - ``redis://host:port/db`` (``rediss://`` for TLS; ``?namespace=name`` to share a
      database): a `RedisStore`, with the `redis` extra
    """
    if url is None:
        return DiskStore()
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "memory":
        return MemoryStore()
    if scheme in ("disk", "file"):
        path = parts.netloc + parts.path
        if not path:
            raise StoreError(f"store URL {url!r} names no directory: disk:///path/to/store")
        return DiskStore(path)
    if scheme in ("redis", "rediss"):
        from ._redis import RedisStore

        return RedisStore(url)
    if scheme == "" or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        return DiskStore(url)
    raise StoreError(f"unknown store URL {url!r}: use memory://, disk:///path, or a directory path")
