"""`/memory`, `/forget <id>`, `/forget all` + `/forget confirm`, `/remember on|off`.

The confirmation is plain text, so it works the same in every channel: `/forget all` says
what would go and asks for `/forget confirm` within a time window; nothing is deleted before.
The pending confirmation belongs to the user in one memory scope, and expires on its own.

`/memory` and `/forget` act on the message's memory scope: the user's own memory in private,
the group's in a group, where only the bot's operators may make it forget. `/remember` is
the person's own switch, wherever it is said.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.conversation.scope import MemoryScope, memory_scope_of
from bot.forgetting import ForgottenEverywhere, forget_everywhere
from bot.i18n.catalogue import commands as command_texts
from bot.i18n.catalogue import memory as texts
from bot.memory.episodes import said_and_answered
from bot.memory.forgetting import recallable
from bot.memory.model import TRAITS, Layer, MemoryItem, shorten
from bot.memory.remember_switch import RememberSwitch
from bot.ports.memory import (
    BrowsableMemory,
    LeavesTraces,
    PendingExtraction,
    UserMemoryStore,
)
from bot.ports.turns import TurnStopper

log = logging.getLogger(__name__)

LISTED_ITEMS = 30
SHOWN_CHARS = 160
"""Characters of an item `/memory <words>` shows."""
_ITEM_ID = re.compile(r"^#?([0-9a-f]{6,32})$")


@dataclass
class MemoryCommands:
    """Memory controls for users. `stores` holds every store `/forget all` must empty,
    short-term memory included; other kinds of memory join by being listed there."""

    registry: CommandRegistry
    memory: BrowsableMemory
    stores: Sequence[UserMemoryStore]
    switch: RememberSwitch
    extraction: PendingExtraction | None = None
    turns: TurnStopper | None = None
    """Stops an answer in progress before `/forget confirm`, which would save it back."""
    confirm_seconds: float = 120
    clock: Callable[[], float] = time.monotonic
    _pending: dict[tuple[str, str], float] = field(default_factory=dict)
    """(scope owner, user id) -> when the `/forget all` awaiting `/forget confirm` expires."""

    def register(self) -> None:
        # What a member sees of memory is theirs alone: in a group it is answered in private.
        self.registry.register(
            Command("memory", command_texts.about_memory.say(), self.show, private_in_groups=True)
        )
        self.registry.register(
            Command("forget", command_texts.about_forget.say(), self.forget, private_in_groups=True)
        )
        self.registry.register(
            Command("remember", command_texts.about_remember.say(), self.remember)
        )

    async def show(self, call: CommandCall) -> str:
        scope, user_id = memory_scope_of(call.message), call.message.user_id
        if call.args.strip():
            return await self._show_about(scope, call.args.strip())
        overview = await self.memory.overview(scope.owner)
        group = scope.is_group
        if overview.facts:
            lines = [texts.remembered_header(group, len(overview.facts))]
            for item in overview.facts[:LISTED_ITEMS]:
                kind = texts.item_kind(TRAITS[item.type].label)
                lines.append(f"#{item.id} {item.content} ({kind}, {item.updated_at:%Y-%m-%d})")
            if len(overview.facts) > LISTED_ITEMS:
                lines.append(texts.older_items(len(overview.facts) - LISTED_ITEMS))
        else:
            lines = [texts.nothing_remembered_yet(group)]
        lines.append(texts.snippets(overview.episodes))
        if overview.document_parts:
            lines.append(texts.document_parts(overview.document_parts))
        for store in self.stores:
            if store is not self.memory:
                count = await store.count_for(scope.owner)
                lines.append(f"{_capital(texts.store_name(store.label))}: {count}")
        lines.append(texts.remembering_state(group, self.switch.is_remembering(user_id)))
        if group:
            lines.append(texts.group_memory_apart())
        lines.append(texts.how_to_forget() if scope.may_forget else texts.group_forget_refusal())
        return "\n".join(lines)

    async def forget(self, call: CommandCall) -> str:
        scope, argument = memory_scope_of(call.message), call.args.strip().lower()
        if not scope.may_forget:
            log.info("[Memory] /forget in a group refused: user is not an operator")
            return texts.group_forget_refusal()
        if argument == "confirm" and self.turns is not None:
            await self.turns.stop(call.message.address.session_key)
        if argument == "all":
            return await self._ask_to_confirm(scope)
        if argument == "confirm":
            return await self._forget_all(scope)
        match = _ITEM_ID.match(argument)
        if match is None:
            return texts.forget_usage()
        everywhere = await forget_everywhere(self.memory, self.stores, scope.owner, match.group(1))
        if everywhere is None:
            return texts.no_such_item(match.group(1))
        return _forgotten_reply(everywhere)

    async def _show_about(self, scope: MemoryScope, words: str) -> str:
        """`/memory <words>`: what recall could bring back about them, each with its id."""
        found = await recallable(self.memory, scope.owner, words)
        if not (found.facts or found.snippets or found.parts):
            return texts.nothing_about(words)
        lines = [texts.recallable_header(words)]
        for heading, items in (
            (texts.facts_heading(), found.facts),
            (texts.snippets_heading(), found.snippets),
            (texts.parts_heading(), found.parts),
        ):
            if items:
                lines.append(heading)
                lines += [f"#{item.id} {_shown(item)}" for item in items]
        if await self._long_term_holds_some(scope.owner):
            lines.append(texts.long_term_not_listed())
        lines.append(texts.how_to_forget() if scope.may_forget else texts.group_forget_refusal())
        return "\n".join(lines)

    async def _long_term_holds_some(self, owner: str) -> bool:
        """Whether a store that `/forget <id>` cannot search (LightRAG's documents) holds
        anything of `owner`: then a reply says what may remain there."""
        for store in self.stores:
            if isinstance(store, LeavesTraces) and await store.count_for(owner):
                return True
        return False

    async def remember(self, call: CommandCall) -> str:
        user_id, argument = call.message.user_id, call.args.strip().lower()
        if argument not in ("on", "off"):
            return texts.remember_usage(self.switch.is_remembering(user_id))
        if argument == "off" and self.extraction is not None:
            await self.extraction.discard(user_id)
        if not await self.switch.set_remembering(user_id, argument == "on"):
            return texts.remember_not_recorded()
        return texts.remembering_off() if argument == "off" else texts.remembering_on()

    async def _ask_to_confirm(self, scope: MemoryScope) -> str:
        counts = [(store.label, await store.count_for(scope.owner)) for store in self.stores]
        if not any(count for _, count in counts):
            return texts.nothing_to_forget(scope.is_group)
        self._pending[(scope.owner, scope.speaker_id)] = self.clock() + self.confirm_seconds
        return texts.confirm_forget_all(scope.is_group, _listing(counts), self.confirm_seconds)

    async def _forget_all(self, scope: MemoryScope) -> str:
        deadline = self._pending.pop((scope.owner, scope.speaker_id), None)
        if deadline is None or self.clock() > deadline:
            return texts.nothing_to_confirm(self.confirm_seconds)
        if self.extraction is not None:
            await self.extraction.discard(scope.owner)
        done, failed, traces = [], [], []
        for store in self.stores:
            try:
                forgotten = await store.forget_user(scope.owner)
            except Exception as exc:
                log.warning("[Memory] /forget all: %s failed: %s", store.label, exc)
                failed.append(store.label)
                continue
            done.append((store.label, forgotten))
            if isinstance(store, LeavesTraces) and (left := store.traces_left(scope.owner)):
                traces.append(left)
        reply = texts.forgot_all(_listing(done)) if done else ""
        reply += "".join(f" {left}" for left in traces)
        if failed:
            names = ", ".join(texts.store_name(label) for label in failed)
            reply += " " + texts.could_not_forget(names)
        return reply.strip()


def _shown(item: MemoryItem) -> str:
    """One line of `/memory <words>`: an item's words (a snippet's: the user's), short."""
    if item.layer is Layer.EPISODIC:
        text = said_and_answered(item.content)[0]
    elif item.layer is Layer.DOCUMENT:
        text = f"({item.title}) {item.content}"
    else:
        text = item.content
    return f"{shorten(text, SHOWN_CHARS)} ({item.updated_at:%Y-%m-%d})"


def _listing(counts: list[tuple[str, int]]) -> str:
    return ", ".join(f"{count} {texts.store_name(label)}" for label, count in counts)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _forgotten_reply(everywhere: ForgottenEverywhere) -> str:
    """What `/forget <id>` says it deleted, and what may remain."""
    gone = everywhere.short_term
    reply = texts.forgotten(gone.item.content)
    if gone.snippets:
        ids = ", ".join(f"#{item.id}" for item in gone.snippets)
        reply += " " + texts.snippets_forgotten(len(gone.snippets), ids)
    if gone.parts:
        reply += " " + texts.parts_forgotten(gone.parts)
    if everywhere.long_term_failed:
        reply += " " + texts.long_term_may_hold()
    if everywhere.long_term:
        reply += " " + texts.long_term_forgotten(everywhere.long_term)
        reply += " " + texts.lightrag_graph_may_keep()
    return reply
