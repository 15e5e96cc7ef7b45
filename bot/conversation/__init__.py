"""Conversation data: messages, addresses and sessions."""

from bot.conversation.messages import (
    ChatAddress,
    ChatMessage,
    IncomingFile,
    IncomingMessage,
    ToolCall,
    clean_text,
    utc_now,
)
from bot.conversation.scope import MemoryScope, Speaker, memory_scope_of
from bot.conversation.session import Session, recent_history

__all__ = [
    "ChatAddress",
    "ChatMessage",
    "IncomingFile",
    "IncomingMessage",
    "MemoryScope",
    "Session",
    "Speaker",
    "ToolCall",
    "clean_text",
    "memory_scope_of",
    "recent_history",
    "utc_now",
]
