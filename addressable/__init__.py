"""addressable: every tool result of an LLM agent gets a stable id, a blake3 content hash
and a place in a store, so that compaction can replace it with a tiny reference and the
model can replay it by id.

    import addressable as ad
    kit = ad.Toolkit(ad.open_store())

This front door holds what a first hour needs; the rest lives in namespaces:
`addressable.errors`, `addressable.store`, `addressable.messages`,
`addressable.compaction`, `addressable.state`, `addressable.tokens` and `addressable.kit`;
the tools are in `addressable.adapters`. Names are loaded when first used, so that importing the
package (and starting the command line) loads nothing it does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "AddressableError",
    "AmbiguousId",
    "ArgumentError",
    "BadId",
    "BundleError",
    "CachePrices",
    "Claim",
    "Compaction",
    "ConfigError",
    "DeadlineExceeded",
    "DefaultSummarizer",
    "Determinism",
    "DiskStore",
    "EventLoopError",
    "Evicted",
    "Expired",
    "IntegrityError",
    "MalformedMessages",
    "MemoryStore",
    "MissingDependency",
    "ModelTool",
    "NoStore",
    "NotFound",
    "NotReplayable",
    "Observation",
    "Outcome",
    "ReadOnly",
    "Record",
    "RedisStore",
    "Reference",
    "Report",
    "Result",
    "ScopeError",
    "Secrets",
    "Stale",
    "StateDocument",
    "Status",
    "Store",
    "StoreError",
    "Summarizer",
    "Task",
    "Toolkit",
    "compact",
    "compact_state",
    "compaction_pays",
    "count_tokens",
    "evict",
    "export_bundle",
    "handle_content",
    "import_bundle",
    "open_store",
    "token_counter",
]

# Where each name lives: the front door's, and the names earlier code reaches through
# `addressable` that now live in a namespace (still found here, not listed).
_HOMES: dict[str, tuple[str, str]] = {
    "AddressableError": ("addressable.core.errors", "AddressableError"),
    "AmbiguousId": ("addressable.core.errors", "AmbiguousId"),
    "ArgumentError": ("addressable.core.errors", "ArgumentError"),
    "Artifact": ("addressable.state.document", "Artifact"),
    "BadId": ("addressable.core.errors", "BadId"),
    "BundleError": ("addressable.core.errors", "BundleError"),
    "BundleSummary": ("addressable.recording.bundle", "BundleSummary"),
    "CachePrices": ("addressable.context.compaction", "CachePrices"),
    "Checkpoint": ("addressable.state.document", "Checkpoint"),
    "Claim": ("addressable.core.records", "Claim"),
    "Compaction": ("addressable.context.compaction", "Compaction"),
    "ConfigError": ("addressable.core.errors", "ConfigError"),
    "Conversation": ("addressable.context.messages", "Conversation"),
    "DamagedRecord": ("addressable.store", "DamagedRecord"),
    "DeadlineExceeded": ("addressable.core.errors", "DeadlineExceeded"),
    "DefaultSummarizer": ("addressable.context.summarize", "DefaultSummarizer"),
    "Determinism": ("addressable.core.records", "Determinism"),
    "DiskStore": ("addressable.store", "DiskStore"),
    "EventLoopError": ("addressable.core.errors", "EventLoopError"),
    "Evicted": ("addressable.context.compaction", "Evicted"),
    "Expired": ("addressable.core.errors", "Expired"),
    "Finding": ("addressable.state.document", "Finding"),
    "GcReport": ("addressable.store", "GcReport"),
    "Hypothesis": ("addressable.state.document", "Hypothesis"),
    "IntegrityError": ("addressable.core.errors", "IntegrityError"),
    "KeyValueStore": ("addressable.store", "KeyValueStore"),
    "MIN_BUDGET": ("addressable.context.summarize", "MIN_BUDGET"),
    "MalformedMessages": ("addressable.core.errors", "MalformedMessages"),
    "MemoryStore": ("addressable.store", "MemoryStore"),
    "MessageShape": ("addressable.context.messages", "Shape"),
    "MissingDependency": ("addressable.core.errors", "MissingDependency"),
    "ModelTool": ("addressable.tools.definitions", "ModelTool"),
    "NoStore": ("addressable.core.errors", "NoStore"),
    "NotFound": ("addressable.core.errors", "NotFound"),
    "NotReplayable": ("addressable.core.errors", "NotReplayable"),
    "Observation": ("addressable.core.records", "Observation"),
    "OpenItem": ("addressable.state.document", "OpenItem"),
    "Outcome": ("addressable.core.records", "Outcome"),
    "PAYBACK": ("addressable.context.compaction", "PAYBACK"),
    "Problem": ("addressable.state.document", "Problem"),
    "ReadOnly": ("addressable.core.errors", "ReadOnly"),
    "Record": ("addressable.core.records", "Record"),
    "RecordOptions": ("addressable.kit", "RecordOptions"),
    "Recovery": ("addressable.state.continuity", "Recovery"),
    "RedisStore": ("addressable.store", "RedisStore"),
    "Reference": ("addressable.core.records", "Reference"),
    "Report": ("addressable.core.records", "Report"),
    "Result": ("addressable.core.records", "Result"),
    "Revalidation": ("addressable.state.continuity", "Revalidation"),
    "ScopeError": ("addressable.core.errors", "ScopeError"),
    "Secrets": ("addressable.core.secrets", "Secrets"),
    "Stale": ("addressable.core.errors", "Stale"),
    "StaleWarning": ("addressable.core.errors", "StaleWarning"),
    "StateAction": ("addressable.state.document", "StateAction"),
    "StateCompaction": ("addressable.state.prompt", "StateCompaction"),
    "StateDocument": ("addressable.state.document", "StateDocument"),
    "StateObservation": ("addressable.state.document", "StateObservation"),
    "Status": ("addressable.core.records", "Status"),
    "Store": ("addressable.store", "Store"),
    "StoreError": ("addressable.core.errors", "StoreError"),
    "StoreStats": ("addressable.store", "StoreStats"),
    "Summarizer": ("addressable.context.summarize", "Summarizer"),
    "Task": ("addressable.state.document", "Task"),
    "TokenCounter": ("addressable.core.tokens", "TokenCounter"),
    "TokenEstimateWarning": ("addressable.core.tokens", "TokenEstimateWarning"),
    "Tokenizer": ("addressable.core.tokens", "Tokenizer"),
    "ToolCall": ("addressable.context.messages", "ToolCall"),
    "ToolResult": ("addressable.context.messages", "ToolResult"),
    "ToolSpec": ("addressable.recording.spec", "ToolSpec"),
    "Toolkit": ("addressable.kit", "Toolkit"),
    "VerifyReport": ("addressable.store", "VerifyReport"),
    "compact": ("addressable.context.compaction", "compact"),
    "compact_state": ("addressable.state.prompt", "compact_state"),
    "compaction_pays": ("addressable.context.compaction", "compaction_pays"),
    "count_tokens": ("addressable.core.tokens", "count_tokens"),
    "definition": ("addressable.tools.definitions", "definition"),
    "encoding_for_model": ("addressable.core.tokens", "encoding_for_model"),
    "evict": ("addressable.context.stubs", "evict"),
    "export_bundle": ("addressable.recording.bundle", "export_bundle"),
    "handle_content": ("addressable.tools.replay", "handle_content"),
    "ids": ("addressable", "ids"),
    "import_bundle": ("addressable.recording.bundle", "import_bundle"),
    "message_text": ("addressable.context.messages", "message_text"),
    "message_tokens": ("addressable.context.messages", "message_tokens"),
    "open_store": ("addressable.store", "open_store"),
    "parse_messages": ("addressable.context.messages", "parse"),
    "parse_stub": ("addressable.context.stubs", "parse_stub"),
    "payload_text": ("addressable.core.payload", "payload_text"),
    "set_result_text": ("addressable.context.messages", "set_result_text"),
    "state_prompt": ("addressable.state.prompt", "state_prompt"),
    "state_schema": ("addressable.state.prompt", "state_schema"),
    "token_counter": ("addressable.core.tokens", "token_counter"),
    "tokens_exact": ("addressable.core.tokens", "tokens_exact"),
    "using_tokenizer": ("addressable.core.tokens", "using_tokenizer"),
}
# Namespaces reached as attributes (`ad.ids.content_hash`), loaded when first used.
_NAMESPACES = ("compaction", "errors", "ids", "messages", "state", "store", "tokens")


def __getattr__(name: str) -> Any:
    if name in _NAMESPACES:
        return importlib.import_module(f"addressable.{name}")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'addressable' has no attribute {name!r}")
    value = getattr(importlib.import_module(home[0]), home[1])
    globals()[name] = value  # found once; later reads do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *_NAMESPACES, "__version__"})


if TYPE_CHECKING:
    from . import compaction as compaction
    from . import errors as errors
    from . import ids as ids
    from . import messages as messages
    from . import state as state
    from . import store as store
    from . import tokens as tokens
    from .context.compaction import PAYBACK as PAYBACK
    from .context.compaction import CachePrices as CachePrices
    from .context.compaction import Compaction as Compaction
    from .context.compaction import Evicted as Evicted
    from .context.compaction import compact as compact
    from .context.compaction import compaction_pays as compaction_pays
    from .context.messages import Conversation as Conversation
    from .context.messages import Shape as _MessageShape
    from .context.messages import ToolCall as ToolCall
    from .context.messages import ToolResult as ToolResult
    from .context.messages import message_text as message_text
    from .context.messages import message_tokens as message_tokens
    from .context.messages import parse as _parse_messages
    from .context.messages import set_result_text as set_result_text
    from .context.stubs import evict as evict
    from .context.stubs import parse_stub as parse_stub
    from .context.summarize import MIN_BUDGET as MIN_BUDGET
    from .context.summarize import DefaultSummarizer as DefaultSummarizer
    from .context.summarize import Summarizer as Summarizer
    from .core.errors import AddressableError as AddressableError
    from .core.errors import AmbiguousId as AmbiguousId
    from .core.errors import ArgumentError as ArgumentError
    from .core.errors import BadId as BadId
    from .core.errors import BundleError as BundleError
    from .core.errors import ConfigError as ConfigError
    from .core.errors import DeadlineExceeded as DeadlineExceeded
    from .core.errors import EventLoopError as EventLoopError
    from .core.errors import Expired as Expired
    from .core.errors import IntegrityError as IntegrityError
    from .core.errors import MalformedMessages as MalformedMessages
    from .core.errors import MissingDependency as MissingDependency
    from .core.errors import NoStore as NoStore
    from .core.errors import NotFound as NotFound
    from .core.errors import NotReplayable as NotReplayable
    from .core.errors import ReadOnly as ReadOnly
    from .core.errors import ScopeError as ScopeError
    from .core.errors import Stale as Stale
    from .core.errors import StaleWarning as StaleWarning
    from .core.errors import StoreError as StoreError
    from .core.payload import payload_text as payload_text
    from .core.records import Claim as Claim
    from .core.records import Determinism as Determinism
    from .core.records import Observation as Observation
    from .core.records import Outcome as Outcome
    from .core.records import Record as Record
    from .core.records import Reference as Reference
    from .core.records import Report as Report
    from .core.records import Result as Result
    from .core.records import Status as Status
    from .core.secrets import Secrets as Secrets
    from .core.tokens import TokenCounter as TokenCounter
    from .core.tokens import TokenEstimateWarning as TokenEstimateWarning
    from .core.tokens import Tokenizer as Tokenizer
    from .core.tokens import count_tokens as count_tokens
    from .core.tokens import encoding_for_model as encoding_for_model
    from .core.tokens import token_counter as token_counter
    from .core.tokens import tokens_exact as tokens_exact
    from .core.tokens import using_tokenizer as using_tokenizer
    from .kit import RecordOptions as RecordOptions
    from .kit import Toolkit as Toolkit
    from .recording.bundle import BundleSummary as BundleSummary
    from .recording.bundle import export_bundle as export_bundle
    from .recording.bundle import import_bundle as import_bundle
    from .recording.spec import ToolSpec as ToolSpec
    from .state.continuity import Recovery as Recovery
    from .state.continuity import Revalidation as Revalidation
    from .state.document import Artifact as Artifact
    from .state.document import Checkpoint as Checkpoint
    from .state.document import Finding as Finding
    from .state.document import Hypothesis as Hypothesis
    from .state.document import OpenItem as OpenItem
    from .state.document import Problem as Problem
    from .state.document import StateAction as StateAction
    from .state.document import StateDocument as StateDocument
    from .state.document import StateObservation as StateObservation
    from .state.document import Task as Task
    from .state.prompt import StateCompaction as StateCompaction
    from .state.prompt import compact_state as compact_state
    from .state.prompt import state_prompt as state_prompt
    from .state.prompt import state_schema as state_schema
    from .store import DamagedRecord as DamagedRecord
    from .store import DiskStore as DiskStore
    from .store import GcReport as GcReport
    from .store import KeyValueStore as KeyValueStore
    from .store import MemoryStore as MemoryStore
    from .store import RedisStore as RedisStore
    from .store import Store as Store
    from .store import StoreStats as StoreStats
    from .store import VerifyReport as VerifyReport
    from .store import open_store as open_store
    from .tools.definitions import ModelTool as ModelTool
    from .tools.definitions import definition as definition
    from .tools.replay import handle_content as handle_content

    MessageShape = _MessageShape
    parse_messages = _parse_messages
