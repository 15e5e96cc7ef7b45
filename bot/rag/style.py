"""Which retrieval style a query may use: `answer` only while no one else's words can leak.

In `answer` style LightRAG's own LLM answers from every document on the server, whoever said
it; the bot cannot filter that answer. So `answer` is refused, and `context` used instead,
while more than one person can talk to the bot or the server holds more than one user's
documents, and always for a group's query.
"""

from __future__ import annotations

from bot.config import RuntimeConfig
from bot.config.model import RetrievalStyle


def answer_style_refusal(config: RuntimeConfig, owners: int) -> str | None:
    """Why `answer` style cannot be used now; None when it can, or was not asked for.
    `owners` is how many users have documents on the server (the index ledger's count)."""
    if config.rag.retrieval_style != "answer":
        return None
    people = len(config.telegram.allowed_users)
    if people > 1:
        return f"{people} users are allowed in telegram.allowedUsers"
    if owners > 1:
        return f"LightRAG holds documents of {owners} users"
    return None


def effective_style(config: RuntimeConfig, owners: int, in_group: bool = False) -> RetrievalStyle:
    """The style a query uses. A group's is always `context`: LightRAG would answer it from
    every document on the server, its members' private ones too, and a group uses only what
    was said in it."""
    if in_group or answer_style_refusal(config, owners):
        return "context"
    return config.rag.retrieval_style


def refusal_notice(reason: str) -> str:
    """One line for the log and `/status`."""
    return (
        f"rag.retrievalStyle 'answer' is refused while {reason}: LightRAG would answer from "
        "everyone's documents. Using 'context' style, which keeps each user's memories to them."
    )
