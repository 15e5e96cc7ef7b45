"""Whose memory a turn reads and writes: the place it was learned, not only the person.

A reply in a group is read by every member, so it must never draw on what one member told
the bot in private. Memory therefore belongs to a scope: a private chat (and the terminal)
uses the user's own memory, keyed by their user id as it always was; a group, a supergroup
and every forum topic in it share the group's memory, keyed `group:<channel>:<chat id>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.conversation.messages import IncomingMessage

GROUP_PREFIX = "group:"


@dataclass(frozen=True)
class Speaker:
    """Who said something learned in a group: stored items name them, not "the user"."""

    id: str
    name: str


@dataclass(frozen=True)
class MemoryScope:
    """Where memory is read and written for one turn or command."""

    owner: str
    """The key every memory store files this scope under: a user id, or `group:…`."""
    speaker_id: str
    """Who is talking now; in a group one member among many."""
    speaker_name: str | None = None
    """The speaker's display name, when the channel knows it."""
    may_forget: bool = True
    """Whether the speaker may delete from this scope: always their own memory; a group's
    only when they run the bot (`IncomingMessage.operator`, Telegram's `adminUsers`)."""

    @property
    def is_group(self) -> bool:
        return self.owner.startswith(GROUP_PREFIX)

    @property
    def description(self) -> str:
        """For people: "you" in private, "this group" in a group."""
        return "this group" if self.is_group else "you"

    @property
    def speaker(self) -> Speaker | None:
        """In a group, who is talking (their display name, else `user <id>`); None in private,
        where "the user" is the only person the memory is about."""
        if not self.is_group:
            return None
        name = " ".join((self.speaker_name or "").split())[:64]
        return Speaker(self.speaker_id, name or f"user {self.speaker_id}")


def group_scope(channel: str, chat_id: str) -> str:
    """The owner key of a group's memory: every store files the group's data under it."""
    return f"{GROUP_PREFIX}{channel}:{chat_id}"


def memory_scope_of(message: IncomingMessage) -> MemoryScope:
    """The scope of `message`: the sender's own memory in private, the group's in a group.

    A forum topic shares its group's scope: the same people read every topic. In a group only
    the bot's operators may make it forget: one member must not erase what others told it.
    """
    if not message.in_group:
        return MemoryScope(message.user_id, message.user_id, message.user_name)
    owner = group_scope(message.address.channel, message.address.chat_id)
    return MemoryScope(owner, message.user_id, message.user_name, may_forget=message.operator)
