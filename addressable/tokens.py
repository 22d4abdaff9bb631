"""Token counts in OpenAI's encodings (cl100k_base by default), exact with the `tokens`
extra and estimated without it, and the counter a run uses.
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
