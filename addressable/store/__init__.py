"""Stores: where records and payloads live."""

from .backend import Backend
from .disk.store import DiskStore, default_home
from .kv import KeyValueStore
from .memory import MemoryStore
from .open import open_store
from .protocol import DamagedRecord, GcReport, Store, StoreStats, VerifyReport
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
    "VerifyReport",
    "default_home",
    "open_store",
]
