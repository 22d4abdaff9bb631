"""Stores: where records and payloads live."""

from typing import TYPE_CHECKING, Any

from .backend import Backend
from .disk.store import DiskStore, default_home
from .frame import Summary
from .kv import KeyValueStore
from .memory import MemoryStore
from .open import open_store
from .protocol import Store

if TYPE_CHECKING:
    from .models import DamagedRecord, GcReport, StoreStats, VerifyReport
    from .redis.store import RedisStore

__all__ = [
    "Backend",
    "DamagedRecord",
    "DiskStore",
    "GcReport",
    "KeyValueStore",
    "MemoryStore",
    "RedisStore",
    "Store",
    "StoreStats",
    "Summary",
    "VerifyReport",
    "default_home",
    "open_store",
]


_MODELS = {"DamagedRecord", "GcReport", "StoreStats", "VerifyReport"}


def __getattr__(name: str) -> Any:
    # The Redis store is imported when first named: it needs the redis client.
    if name == "RedisStore":
        from .redis.store import RedisStore

        return RedisStore
    if name in _MODELS:  # pydantic models: a listing needs none of them
        from . import models

        return getattr(models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
