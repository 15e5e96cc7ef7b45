"""Conversation data: messages, addresses and sessions."""

from bot.conversation.messages import (
    ChatAddress,
    ChatMessage,
    IncomingMessage,
    ToolCall,
    clean_text,
    utc_now,
)
from bot.conversation.session import Session, estimate_tokens, recent_history

__all__ = [
    "ChatAddress",
    "ChatMessage",
    "IncomingMessage",
    "Session",
    "ToolCall",
    "clean_text",
    "estimate_tokens",
    "recent_history",
    "utc_now",
]
