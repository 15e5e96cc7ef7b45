"""What one turn carries from system to system: typed fields, no string-keyed attributes."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.config import RuntimeConfig
from bot.conversation import ChatMessage, IncomingMessage, MemoryScope, Session, memory_scope_of
from bot.ports.channel import ChannelPort, ReplyStream
from bot.ports.llm import ImageInput


@dataclass(frozen=True)
class SystemFailure:
    """A system that raised; recorded so later systems and the reply guarantee can see it."""

    system: str
    error: str


@dataclass
class TurnContext:
    """One turn: the message, its session, the config snapshot, and what the systems produce."""

    message: IncomingMessage
    session: Session
    config: RuntimeConfig
    channel: ChannelPort
    stream: ReplyStream | None = None
    remembering: bool = True
    """False while the user has said `/remember off`: nothing of this turn is stored or indexed."""
    memory_scope: MemoryScope = field(init=False)
    """Whose memory this turn recalls and stores: the user's in private, the group's in a
    group. Computed once from the message; every memory read and write goes through it."""

    # Filled by attachments (10).
    images: list[ImageInput] = field(default_factory=list)
    """A photo for the model, this turn only: never in the session (`llm.vision`)."""
    shared_document: str = ""
    """A document sent with a question: its name and the start of its text, for the model
    to answer from in this turn (the whole text goes to long-term memory)."""

    # Filled by context building (20).
    system_prompt: str = ""
    memory_pack: str = ""
    rag_context: str = ""
    skill: str | None = None
    """The name of the skill whose instructions this turn's prompt carries (and the indexed
    exchange's `Skill:` line); None when the chat has none, or it is no longer there."""
    skill_text: str = ""
    """That skill's `# Active Skill` section: its instructions and the files it has."""

    # Filled by the tool loop (30).
    streamed_text: str = ""
    """What the user has been shown of the answer so far while it streams (kept if stopped)."""
    turn_messages: list[ChatMessage] = field(default_factory=list)
    """Assistant and tool messages of this turn, complete, ready to append to the session."""
    final_text: str | None = None
    """The model's final answer; None when there is none."""
    notice: str | None = None
    """What to tell the user instead of the model's answer (LLM down, a limit reached, a
    document filed); once set, the model is not asked."""

    # Filled by response routing (60).
    reply_sent: bool = False

    failures: list[SystemFailure] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.memory_scope = memory_scope_of(self.message)

    @property
    def user_text(self) -> str:
        return self.message.text

    @property
    def shared(self) -> bool:
        """A group or a guest chat: everyone there reads the answer (`ToolContext.shared`)."""
        return self.memory_scope.is_group or self.message.guest

    @property
    def user_id(self) -> str:
        return self.message.user_id
