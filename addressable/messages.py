"""Message lists in the shapes of the APIs (Anthropic Messages, OpenAI Chat and
Responses, LangChain), read as compaction reads them, and the text and tokens of a
message.
"""

from .context.messages import (
    Conversation,
    Shape,
    ToolCall,
    ToolResult,
    detect,
    message_text,
    message_tokens,
    parse,
    reading_once,
    said,
    set_result_text,
)
from .core.errors import MalformedMessages

__all__ = [
    "Conversation",
    "MalformedMessages",
    "Shape",
    "ToolCall",
    "ToolResult",
    "detect",
    "message_text",
    "message_tokens",
    "parse",
    "reading_once",
    "said",
    "set_result_text",
]
