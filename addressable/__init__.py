"""addressable: every tool result of an LLM agent gets a stable id, a blake3 content hash
and a place in a store, so that compaction can replace it with a tiny reference and the
model can replay it by id.

    import addressable as ad
    kit = ad.Toolkit(ad.open_store())
"""

from . import ids as ids
from .context.compaction import Compaction, Evicted, compact
from .context.evict import evict
from .context.messages import (
    Conversation,
    MalformedMessages,
    ToolCall,
    ToolResult,
    set_result_text,
)
from .context.messages import Shape as MessageShape
from .context.messages import parse as parse_messages
from .context.messagetokens import message_text, message_tokens
from .context.stubs import parse_stub
from .context.summarize import MIN_BUDGET, DefaultSummarizer, Summarizer
from .context.timing import PAYBACK, CachePrices, compaction_pays
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
    MissingDependency,
    NoStore,
    NotFound,
    NotReplayable,
    ReadOnly,
    ScopeError,
    StoreError,
)
from .core.payload import payload_text
from .core.records import (
    Claim,
    Determinism,
    Observation,
    Outcome,
    Record,
    Reference,
    Report,
    Result,
    Status,
)
from .core.secrets import Secrets
from .core.tokens import (
    TokenCounter,
    TokenEstimateWarning,
    Tokenizer,
    count_tokens,
    encoding_for_model,
    token_counter,
    tokens_exact,
    using_tokenizer,
)
from .kit import RecordOptions, Toolkit
from .recording.bundle import BundleSummary, export_bundle, import_bundle
from .recording.spec import ToolSpec
from .state.continuity import Recovery, Revalidation, Stale, StaleWarning
from .state.document import (
    Artifact,
    Checkpoint,
    Finding,
    Hypothesis,
    OpenItem,
    Problem,
    StateAction,
    StateDocument,
    StateObservation,
    Task,
)
from .state.prompt import StateCompaction, compact_state, state_prompt, state_schema
from .store import (
    DamagedRecord,
    DiskStore,
    GcReport,
    KeyValueStore,
    MemoryStore,
    RedisStore,
    Store,
    StoreStats,
    VerifyReport,
    open_store,
)
from .tools.definitions import ModelTool, definition
from .tools.replay import handle_content

__version__ = "0.1.0"

__all__ = [
    "MIN_BUDGET",
    "PAYBACK",
    "AddressableError",
    "AmbiguousId",
    "ArgumentError",
    "Artifact",
    "BadId",
    "BundleError",
    "BundleSummary",
    "CachePrices",
    "Checkpoint",
    "Claim",
    "Compaction",
    "ConfigError",
    "Conversation",
    "DamagedRecord",
    "DeadlineExceeded",
    "DefaultSummarizer",
    "Determinism",
    "DiskStore",
    "EventLoopError",
    "Evicted",
    "Expired",
    "Finding",
    "GcReport",
    "Hypothesis",
    "IntegrityError",
    "KeyValueStore",
    "MalformedMessages",
    "MemoryStore",
    "MessageShape",
    "MissingDependency",
    "ModelTool",
    "NoStore",
    "NotFound",
    "NotReplayable",
    "Observation",
    "OpenItem",
    "Outcome",
    "Problem",
    "ReadOnly",
    "Record",
    "RecordOptions",
    "Recovery",
    "RedisStore",
    "Reference",
    "Report",
    "Result",
    "Revalidation",
    "ScopeError",
    "Secrets",
    "Stale",
    "StaleWarning",
    "StateAction",
    "StateCompaction",
    "StateDocument",
    "StateObservation",
    "Status",
    "Store",
    "StoreError",
    "StoreStats",
    "Summarizer",
    "Task",
    "TokenCounter",
    "TokenEstimateWarning",
    "Tokenizer",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Toolkit",
    "VerifyReport",
    "compact",
    "compact_state",
    "compaction_pays",
    "count_tokens",
    "definition",
    "encoding_for_model",
    "evict",
    "export_bundle",
    "handle_content",
    "import_bundle",
    "message_text",
    "message_tokens",
    "open_store",
    "parse_messages",
    "parse_stub",
    "payload_text",
    "set_result_text",
    "state_prompt",
    "state_schema",
    "token_counter",
    "tokens_exact",
    "using_tokenizer",
]
