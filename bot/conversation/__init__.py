"""Conversation data: messages, addresses and sessions."""

from bot.conversation.messages import (
    ChatAddress,
    ChatMessage,
    IncomingMessage,
    ToolCall,
    utc_now,
)
from bot.conversation.session import Session, estimate_tokens, recent_history

__all__ = [
    "ChatAddress",
    "ChatMessage",
    "IncomingMessage",
    "Session",
    "ToolCall",
    "estimate_tokens",
    "recent_history",
    "utc_now",
]
