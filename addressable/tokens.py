"""Token counts in OpenAI's encodings (cl100k_base by default), exact with tiktoken
(a dependency) and estimated only where it cannot be loaded, and the counter a run uses.
"""

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

__all__ = [
    "TokenCounter",
    "TokenEstimateWarning",
    "Tokenizer",
    "count_tokens",
    "encoding_for_model",
    "token_counter",
    "tokens_exact",
    "using_tokenizer",
]
