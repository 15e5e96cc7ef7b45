"""The `memory` tool: the model adds, searches and forgets memory items itself, in the turn's
memory scope (the user's own memory in private, the group's in a group). Forgetting goes as far
as `/forget <id>` does (`bot/forgetting.py`): the snippets holding the item's words, a
document's parts, and long-term memory's conversations holding them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from bot.forgetting import ForgottenEverywhere, forget_everywhere
from bot.memory.episodes import attributed
from bot.memory.model import ItemType, new_item
from bot.memory.packing import render_line
from bot.ports.memory import (
    BrowsableMemory,
    MemoryItemsPort,
    RememberingPreference,
    UserMemoryStore,
)
from bot.tools.registry import ToolContext

TOOL_CONFIDENCE = 0.95
MAX_TEXT_CHARS = 1000

GROUP_FORGET_REFUSAL_FOR_THE_MODEL = (
    "Only the bot's operators can make me forget what this group told me "
    "(telegram.adminUsers in the runtime config)."
)
"""A tool result: the model reads it and tells the user in their words."""


class ToolMemory(MemoryItemsPort, BrowsableMemory, Protocol):
    """Short-term memory as the tool uses it: items to add and search, and forgetting with
    what holds an item's words."""


class MemoryArguments(BaseModel):
    action: Literal["add", "search", "forget"]
    text: str = Field(
        "",
        max_length=MAX_TEXT_CHARS,
        description="add: one self-contained sentence to remember; search: words to look for.",
    )
    kind: Literal["fact", "preference", "constraint", "howto"] = Field(
        "fact", description="add: what the sentence is."
    )
    item_id: str = Field("", description="forget: the id shown after # in # Memory or search.")


class MemoryTool:
    """Scoped to the turn's memory scope (`ToolContext.memory_scope`): no argument can reach
    another user's or another chat's items; in a group it works on the group's memory, never
    the speaker's private one. Nothing is added while the speaker has turned remembering off."""

    name = "memory"
    description = (
        "The user's memory across conversations. add: store a fact, preference, constraint or "
        "how-to the user wants kept (plain statements such as 'my name is…' are stored "
        "automatically; add what would otherwise be missed). search: find stored items. "
        "forget: delete an item by its id."
    )
    arguments = MemoryArguments

    def __init__(
        self,
        memory: ToolMemory,
        remembering: RememberingPreference,
        long_term: Sequence[UserMemoryStore] = (),
    ) -> None:
        self._memory = memory
        self._remembering = remembering
        self._long_term = long_term
        """Stores beyond short-term memory that forgetting searches (LightRAG's documents)."""

    async def run(self, args: MemoryArguments, context: ToolContext) -> str:
        if not self._memory.enabled:
            return "Memory is turned off by the operator (memory.enabled); nothing was done."
        scope = context.memory_scope
        if args.action == "forget":
            if not scope.may_forget:
                return f"Not forgotten: {GROUP_FORGET_REFUSAL_FOR_THE_MODEL}"
            return await self._forget(args.item_id, scope.owner)
        text = " ".join(args.text.split())
        if not text:
            return f"Error: give the text to {args.action}."
        if args.action == "search":
            found = await self._memory.search(scope.owner, text)
            if not found:
                return f"Nothing in memory matches {text!r}."
            return "\n".join(render_line(scored.item) for scored in found)
        if not self._remembering.is_remembering(context.user_id):
            return "Not stored: the user has turned remembering off (/remember off)."
        item = new_item(ItemType(args.kind), text, source="tool", confidence=TOOL_CONFIDENCE)
        if scope.speaker is not None:
            item = attributed(item, scope.speaker)
        stored = (await self._memory.add(scope.owner, [item]))[0]
        return f"Remembered: {render_line(stored)}"

    async def _forget(self, item_id: str, owner: str) -> str:
        item_id = item_id.strip().lstrip("#")
        if not item_id:
            return "Error: give the item_id to forget."
        everywhere = await forget_everywhere(self._memory, self._long_term, owner, item_id)
        if everywhere is None:
            return f"No memory item #{item_id}."
        return _forgotten(everywhere)


def _forgotten(everywhere: ForgottenEverywhere) -> str:
    """The tool's result after forgetting: what went, and what may remain, for the model to
    tell the user."""
    gone = everywhere.short_term
    said = [f"Forgot: {render_line(gone.item)}"]
    if gone.snippets:
        said.append(f"Also deleted {len(gone.snippets)} conversation snippet(s) holding its words.")
    if gone.parts:
        said.append(f"Also deleted the document's text ({gone.parts} part(s)).")
    if everywhere.long_term:
        said.append(
            f"Also deleted {everywhere.long_term} conversation(s) holding it from long-term "
            "memory (LightRAG); its knowledge graph may keep descriptions drawn from them "
            "until /forget all."
        )
    if everywhere.long_term_failed:
        said.append(
            "Long-term memory (LightRAG) could not be searched just now and may still hold "
            "conversations with these words; /forget all deletes everything there."
        )
    return "\n".join(said)
