"""The errors addressable raises, under one root: `AddressableError` (the tree is drawn
in `addressable.core.errors`), and the warning an action on stale facts gives.
"""

from .core.errors import (
    AddressableError,
    AmbiguousId,
    ArgumentError,
    BadId,
    BundleError,
    ConfigError,
    DeadlineExceeded,
    EventLoopError,
    Expired,
    IntegrityError,
    MalformedMessages,
    MissingDependency,
    NoStore,
    NotFound,
    NotReplayable,
    ReadOnly,
    ScopeError,
    Stale,
    StaleWarning,
    StoreError,
)

__all__ = [
    "AddressableError",
    "AmbiguousId",
    "ArgumentError",
    "BadId",
    "BundleError",
    "ConfigError",
    "DeadlineExceeded",
    "EventLoopError",
    "Expired",
    "IntegrityError",
    "MalformedMessages",
    "MissingDependency",
    "NoStore",
    "NotFound",
    "NotReplayable",
    "ReadOnly",
    "ScopeError",
    "Stale",
    "StaleWarning",
    "StoreError",
]
