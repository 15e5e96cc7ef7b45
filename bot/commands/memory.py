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
from bot.conversation.scope import GROUP_FORGET_REFUSAL, MemoryScope, memory_scope_of
from bot.memory.items import TRAITS
from bot.memory.remember_switch import RememberSwitch
from bot.memory.service import ShortTermMemory
from bot.ports.memory import PendingExtraction, UserMemoryStore
from bot.ports.turns import TurnStopper

log = logging.getLogger(__name__)

LISTED_ITEMS = 30
_ITEM_ID = re.compile(r"^#?([0-9a-f]{6,32})$")
FORGET_USAGE = (
    "Usage: /forget <id> deletes one item (/memory shows the ids); "
    "/forget all deletes everything I remember about you."
)


@dataclass
class MemoryCommands:
    """Memory controls for users. `stores` holds every store `/forget all` must empty,
    short-term memory included; other kinds of memory join by being listed there."""

    registry: CommandRegistry
    memory: ShortTermMemory
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
        self.registry.register(Command("memory", "what I remember about you", self.show))
        self.registry.register(Command("forget", "forget one item, or everything", self.forget))
        self.registry.register(Command("remember", "turn remembering off or on", self.remember))

    async def show(self, call: CommandCall) -> str:
        scope, user_id = memory_scope_of(call.message), call.message.user_id
        overview = await self.memory.overview(scope.owner)
        about = "from this group" if scope.is_group else "about you"
        if overview.facts:
            lines = [f"What I remember {about} ({len(overview.facts)}, newest first):"]
            for item in overview.facts[:LISTED_ITEMS]:
                kind = TRAITS[item.type].label
                lines.append(f"#{item.id} {item.content} ({kind}, {item.updated_at:%Y-%m-%d})")
            if len(overview.facts) > LISTED_ITEMS:
                lines.append(f"… and {len(overview.facts) - LISTED_ITEMS} older ones.")
        else:
            lines = [f"I have no facts or how-tos {about} yet."]
        lines.append(f"Snippets of recent conversations: {overview.episodes}")
        for store in self.stores:
            if store is not self.memory:
                lines.append(f"{_capital(store.label)}: {await store.count_for(scope.owner)}")
        state = "on" if self.switch.is_remembering(user_id) else "OFF (/remember on resumes)"
        lines.append(
            f"Remembering what you say: {state}" if scope.is_group else f"Remembering: {state}"
        )
        if scope.is_group:
            lines.append("Your private memory is never used here, and this group's stays here.")
        if scope.may_forget:
            lines.append("/forget <id> deletes one item, /forget all deletes everything.")
        else:
            lines.append(GROUP_FORGET_REFUSAL)
        return "\n".join(lines)

    async def forget(self, call: CommandCall) -> str:
        scope, argument = memory_scope_of(call.message), call.args.strip().lower()
        if not scope.may_forget:
            log.info("[Memory] /forget in a group refused: user is not an operator")
            return GROUP_FORGET_REFUSAL
        if argument == "confirm" and self.turns is not None:
            await self.turns.stop(call.message.address.session_key)
        if argument == "all":
            return await self._ask_to_confirm(scope)
        if argument == "confirm":
            return await self._forget_all(scope)
        match = _ITEM_ID.match(argument)
        if match is None:
            return FORGET_USAGE
        item = await self.memory.forget(scope.owner, match.group(1))
        if item is None:
            return f"I have no item #{match.group(1)}. Send /memory to see the ids."
        return f"Forgotten: {item.content}"

    async def remember(self, call: CommandCall) -> str:
        user_id, argument = call.message.user_id, call.args.strip().lower()
        if argument not in ("on", "off"):
            state = "on" if self.switch.is_remembering(user_id) else "off"
            return f"Remembering is {state} for you. Usage: /remember off or /remember on."
        if argument == "off" and self.extraction is not None:
            await self.extraction.discard(user_id)
        if not await self.switch.set_remembering(user_id, argument == "on"):
            return (
                "I can't change this now: my settings file is damaged or cannot be written. "
                "Please tell the operator."
            )
        if argument == "off":
            return (
                "Okay: from now on I store nothing new from our conversations, short-term or "
                "long-term. What I already remember stays (/memory shows it, /forget deletes "
                "it). Send /remember on to resume."
            )
        return "Okay: I remember our conversations again."

    async def _ask_to_confirm(self, scope: MemoryScope) -> str:
        counts = [(store.label, await store.count_for(scope.owner)) for store in self.stores]
        about = "from this group" if scope.is_group else "about you"
        if not any(count for _, count in counts):
            return f"I don't remember anything {about}, so there is nothing to forget."
        self._pending[(scope.owner, scope.speaker_id)] = self.clock() + self.confirm_seconds
        return (
            f"This deletes everything I remember {about}: {_listing(counts)}. It cannot be "
            f"undone. To go ahead, send /forget confirm within {_duration(self.confirm_seconds)}."
        )

    async def _forget_all(self, scope: MemoryScope) -> str:
        deadline = self._pending.pop((scope.owner, scope.speaker_id), None)
        if deadline is None or self.clock() > deadline:
            return (
                "There is nothing to confirm: send /forget all first "
                f"(a confirmation is valid for {_duration(self.confirm_seconds)})."
            )
        if self.extraction is not None:
            await self.extraction.discard(scope.owner)
        done, failed = [], []
        for store in self.stores:
            try:
                done.append((store.label, await store.forget_user(scope.owner)))
            except Exception as exc:
                log.warning("[Memory] /forget all: %s failed: %s", store.label, exc)
                failed.append(store.label)
        reply = f"Done: deleted {_listing(done)}." if done else ""
        if failed:
            reply += f" I could not delete the {', '.join(failed)}; please try again later."
        return reply.strip()


def _listing(counts: list[tuple[str, int]]) -> str:
    return ", ".join(f"{count} {label}" for label, count in counts)


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
