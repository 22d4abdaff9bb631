"""`open_store(url)`: one function from a URL to a store."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from diskcache.core import DBNAME

from ..core.errors import ArgumentError, NoStore, StoreError
from .disk.store import DiskStore, default_home
from .memory import MemoryStore
from .protocol import Store


def open_store(url: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open the store a URL names.

    - None: a `DiskStore` in `$ADDRESSABLE_HOME`, or `./.addressable` when unset
    - ``memory://``: a new `MemoryStore`
    - ``disk:///abs/path``, ``disk://rel/path``, a plain path or a `pathlib.Path`: a
      `DiskStore` there
    - ``redis://host:port/db`` (``rediss://`` for TLS; ``?namespace=name`` to share a
      database): a `RedisStore`, with the `redis` extra

    Errors never show a URL's user and password, nor the value of any query parameter
    but the namespace.

    With ``create=False`` a disk store must already exist: a directory that does not
    exist, or holds no store, raises `NoStore` naming it, and nothing is created. (A
    memory store is always new and a Redis server has nothing to create, so for those it
    changes nothing.) Anything but a string, a path or None raises `ArgumentError`.
    """
    if not isinstance(create, bool):
        raise ArgumentError(f"open_store(create=) takes True or False, not {create!r}")
    if url is None:
        return _disk(default_home(), create)
    if isinstance(url, os.PathLike) and not isinstance(url, bytes):
        path = os.fspath(url)
        if isinstance(path, str):
            return _disk(Path(path), create)
    if not isinstance(url, str):
        raise ArgumentError(
            f"open_store() takes a store URL or a directory path (str or os.PathLike), "
            f"not {type(url).__name__} {_short(url)}"
        )
    if not url.strip():
        raise ArgumentError(
            "the store URL is empty: give memory://, disk:///path, redis://host/db or a "
            "directory, or leave it out for the default store"
        )
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. a malformed IPv6 host
        raise StoreError(f"store URL {_shown(url)!r} cannot be parsed: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme == "memory":
        return MemoryStore()
    if scheme in ("disk", "file"):
        path = parts.netloc + parts.path
        if not path:
            raise StoreError(f"store URL {_shown(url)!r} names no directory: disk:///path/to/store")
        return _disk(Path(path), create)
    if scheme in ("redis", "rediss"):
        from .redis.store import RedisStore

        return RedisStore(url)
    if scheme == "" or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        return _disk(Path(url), create)
    raise StoreError(
        f"unknown store URL {_shown(url)!r}: use memory://, disk:///path, or a directory path"
    )


def _disk(path: Path, create: bool) -> DiskStore:
    if not create:
        where = path.absolute()
        if not where.is_dir():
            raise NoStore(
                where, "it is not a directory" if where.exists() else "the directory does not exist"
            )
        if not (where / DBNAME).is_file():
            raise NoStore(where, "the directory holds no store")
    return DiskStore(path)


def _shown(url: str) -> str:
    """`url` as an error may show it: what stands between "://" and the last "@" (a user
    and password) written ***, and a query (which may hold ?password=) cut, found by
    text alone so that it holds for a URL that does not parse too."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    if "?" in rest:
        rest = rest.partition("?")[0] + "?…"
    return f"{scheme}://{rest}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
