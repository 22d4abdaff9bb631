"""Stores: where records and payloads live."""

from ._backend import Backend
from ._base import DamagedRecord, GcReport, Store, StoreStats, VerifyReport
from ._disk import DiskStore, default_home
from ._kv import KeyValueStore
from ._memory import MemoryStore
from ._open import open_store
from ._redis import RedisStore

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
    "VerifyReport",
    "default_home",
    "open_store",
]
