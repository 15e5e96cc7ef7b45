"""A chat's session: its messages since the last `/new`, and the slice of it sent to the LLM."""

from __future__ import annotations

from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

from pydantic import BaseModel, Field, PrivateAttr

from bot.conversation.messages import ChatMessage, utc_now
from bot.conversation.scope import group_scope

UNLIMITED = 2**62
_TOKENS = attrgetter("tokens")
_STORED_JSON = attrgetter("stored_json")
_EXTERNAL_ID = attrgetter("external_id")


class _TokenCount(NamedTuple):
    """What `Session.history_tokens` counted last: how many messages, their tokens, and the
    first and last of them."""

    size: int
    total: int
    first: ChatMessage | None
    last: ChatMessage | None


class Session(BaseModel):
    """Persisted as one JSON file per chat; `/new` archives it and starts a fresh one."""

    key: str
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    messages: list[ChatMessage] = Field(default_factory=list)
    summary: str = ""
    """The rolling summary of older turns that have left `messages` (`/compact`, compaction)."""
    summarised: dict[str, int] = Field(default_factory=dict)
    """Messages of each user that went into `summary`, so `/forget all` finds them there."""
    active_skill: str | None = None
    """The skill this chat works with (`/skill`, or the model's `skill` tool): its
    instructions go into every prompt until it is turned off or `/new` starts afresh."""
    _counted: _TokenCount = PrivateAttr(default_factory=lambda: _TokenCount(0, 0, None, None))

    def to_json(self) -> bytes:
        """The session as `model_dump_json` gives it, but with the JSON its messages keep: it
        is saved after every turn, and every message but the newest was written before."""
        head = self.model_dump_json(exclude={"messages"})
        messages = ",".join(map(_STORED_JSON, self.messages))
        return f'{head[:-1]},"messages":[{messages}]}}'.encode()

    def history_tokens(self) -> int:
        """`history_tokens(self.messages)`, summing only the messages added since it was last
        asked while the ones counted then are still in place: every turn asks it twice, and
        a chat's history runs to hundreds of messages. The counted ones are known to be in
        place when the first and the last of them are where they were (a message is in a
        session once; dropping any of them moves the last, or the first)."""
        messages = self.messages
        size, total, first, last = self._counted
        if 0 < size <= len(messages) and messages[0] is first and messages[size - 1] is last:
            total += history_tokens(messages[size:])
        else:
            total = history_tokens(messages)
        if messages:
            self._counted = _TokenCount(len(messages), total, messages[0], messages[-1])
        return total

    def recent_history(self, token_budget: int) -> list[ChatMessage]:
        """`recent_history` of this session's messages, its total from `history_tokens()`."""
        if self.history_tokens() <= token_budget:
            return list(self.messages)
        return recent_history(self.messages, token_budget)

    @property
    def turn_count(self) -> int:
        return sum(1 for m in self.messages if m.role == "user")

    def answered(self, external_id: str, recent: int = 200) -> bool:
        """Whether the channel message `external_id` is here with an answer after it."""
        tail = self.messages[-recent:]
        ids = list(map(_EXTERNAL_ID, tail))  # asked every turn: the loop runs in C
        if external_id not in ids:
            return False
        return any(later.role == "assistant" for later in tail[ids.index(external_id) + 1 :])

    def cut_for(self, keep_tokens: int, keep_messages: int) -> int:
        """How many of the oldest messages to take out so that the rest fits in `keep_tokens`
        and `keep_messages`: always whole turns (a tool result without its call confuses the
        LLM), and never the last turn; 0 when nothing needs to go."""
        count = len(self.messages)
        kept = recent_history(self.messages, keep_tokens)
        cut = max(count - len(kept), count - keep_messages)
        if cut <= 0:
            return 0
        last_turn = max((i for i, m in enumerate(self.messages) if m.role == "user"), default=0)
        while cut < last_turn and self.messages[cut].role != "user":
            cut += 1
        return min(cut, last_turn)

    def trim(self, max_messages: int) -> int:
        """Drop the oldest whole turns until at most `max_messages` remain (the last turn is
        always kept whole); returns how many messages went. Compaction summarises them first
        (`bot/compaction.py`); this is what is left when it cannot."""
        cut = self.cut_for(UNLIMITED, max_messages)
        del self.messages[:cut]
        return cut

    def fold_into_summary(self, cut: int, summary: str) -> None:
        """Replace the oldest `cut` messages with `summary`, the rolling summary that now
        covers them too; who wrote them is kept, for `/forget all`."""
        for message in self.messages[:cut]:
            if message.role == "user":
                author = message.user_id or _chat_id(self.key)
                self.summarised[author] = self.summarised.get(author, 0) + 1
        del self.messages[:cut]
        self.summary = summary

    def forget_unanswered(self, external_id: str) -> None:
        """Drop the last message if it is `external_id` left without an answer (a turn cut
        short), so that the message can have its turn again."""
        if self.messages and self.messages[-1].external_id == external_id:
            self.messages.pop()

    def forget_user(self, user_id: str) -> int:
        """Drop every turn of `user_id` (their message and what answered it); returns how many
        of their messages went. A message with no recorded author (older sessions) counts as
        theirs in their own private chat, whose chat id is their user id. `user_id` may also
        be a group's memory scope (`group:<channel>:<chat id>`): then every turn of the
        group's chats goes, whoever said it."""
        private = _chat_id(self.key) == user_id
        whole_group = _group_scope(self.key) == user_id
        in_summary = sum(self.summarised.values()) if whole_group else self.summarised.get(user_id)
        if in_summary:  # their words are somewhere in it: the whole summary goes
            self.summary, self.summarised = "", {}
        kept: list[ChatMessage] = []
        dropping, dropped = False, 0
        for message in self.messages:
            if message.role == "user":
                author = message.user_id
                dropping = whole_group or author == user_id or (author is None and private)
                dropped += dropping
            if not dropping:
                kept.append(message)
        self.messages[:] = kept
        return dropped + (in_summary or 0)

    def count_of(self, user_id: str) -> int:
        """How many messages of `user_id` this session holds (see `forget_user`)."""
        private = _chat_id(self.key) == user_id
        whole_group = _group_scope(self.key) == user_id
        in_summary = sum(self.summarised.values()) if whole_group else self.summarised.get(user_id)
        return (in_summary or 0) + sum(
            1
            for m in self.messages
            if m.role == "user"
            and (whole_group or m.user_id == user_id or (m.user_id is None and private))
        )


def _chat_id(session_key: str) -> str:
    parts = session_key.split(":")
    return parts[1] if len(parts) > 1 else ""


def _group_scope(session_key: str) -> str:
    """The memory scope a group's session (`<channel>:<chat id>[:<topic>]`) belongs to."""
    parts = session_key.split(":")
    return group_scope(parts[0], parts[1]) if len(parts) > 1 else ""


def history_tokens(messages: list[ChatMessage]) -> int:
    """About how many tokens `messages` take in a prompt."""
    return sum(map(_TOKENS, messages))


def recent_history(messages: list[ChatMessage], token_budget: int) -> list[ChatMessage]:
    """The newest whole turns that fit in `token_budget`; the last turn is always kept.

    Turns are cut only at user messages, so a tool result never loses the call it answers.
    """
    if history_tokens(messages) <= token_budget:
        return list(messages)  # all of it fits: the usual case, summed in C
    start = len(messages)  # the kept tail begins here
    used = turn_cost = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        turn_cost += message.tokens
        if message.role != "user" and index > 0:
            continue  # inside a turn: it starts at its user message (or the first message)
        if start < len(messages) and used + turn_cost > token_budget:
            break
        used, turn_cost, start = used + turn_cost, 0, index
    return messages[start:]
