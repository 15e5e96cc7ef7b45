"""The runtime config: `preferences/runtime-config.json` as typed, validated sections.

Every field has a default, so a partial file works and a missing file means defaults. JSON keys
are camelCase (`rag.queryMode`), Python attributes snake_case (`config.rag.query_mode`).
Unknown keys are kept aside (pydantic `extra="allow"`) only so the loader can warn about them.
"""

from __future__ import annotations

import re
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic.alias_generators import to_camel


class Section(BaseModel):
    """Base of every section: camelCase keys, immutable, unknown keys collected for a warning."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )


class LlmConfig(Section):
    """The model and the limits of one turn's tool loop."""

    model: str = Field("gpt-4o-mini", min_length=1, description="Model name sent to the API.")
    models: list[str] = Field(
        default_factory=list, description="Models a chat may choose with /model; `model` too."
    )
    temperature: float = Field(0.7, ge=0, le=2)
    max_output_tokens: int = Field(1024, ge=1, le=1_000_000)
    max_output_chars: int = Field(
        20_000, ge=500, le=1_000_000, description="An answer is cut here, whatever the server."
    )
    request_timeout_seconds: float = Field(60, gt=0, le=3600, description="One LLM request.")
    max_tool_iterations: int = Field(8, ge=1, le=100, description="LLM calls in one turn.")
    max_tool_calls: int = Field(16, ge=0, le=1000, description="Tool calls in one turn.")
    turn_deadline_seconds: float = Field(180, gt=0, le=3600, description="Whole turn, wall clock.")
    tool_timeout_seconds: float = Field(20, gt=0, le=600)
    tool_output_max_chars: int = Field(8000, ge=100, le=1_000_000)
    history_token_budget: int = Field(8000, ge=256, le=2_000_000)
    session_max_messages: int = Field(
        500, ge=20, le=100_000, description="Older turns leave the session file."
    )
    summary_max_tokens: int = Field(
        600, ge=50, le=20_000, description="Length of the rolling summary of older turns."
    )
    summary_model: str = Field("", description="Model that writes the summary; empty: model.")
    retry_attempts: int = Field(4, ge=1, le=20, description="Attempts per LLM request.")
    retry_max_seconds: float = Field(60, ge=0, le=3600, description="Total time spent retrying.")
    vision: bool = Field(
        False, description="The model reads images: photos go to it as image parts."
    )


class TelegramConfig(Section):
    """Telegram channel behaviour (see docs/TELEGRAM.md)."""

    allowed_users: list[int] = Field(
        default_factory=list, description="Telegram user ids allowed in; empty answers nobody."
    )
    admin_users: list[int] = Field(
        default_factory=list,
        description="Operators among the allowed users: /status shows them paths and hosts.",
    )
    streaming: bool = True
    drafts: bool = Field(
        True, description="Stream private replies as drafts (sendMessageDraft), not edits."
    )
    require_mention_in_groups: bool = Field(
        True, description="In groups, answer only messages that mention the bot or reply to it."
    )
    max_file_megabytes: int = Field(
        20,
        ge=1,
        le=2000,
        description="Largest file downloaded; Telegram's cloud Bot API caps this at 20.",
    )
    messages_per_second: int = Field(
        30, ge=0, description="New messages the bot sends in any second, all chats (0: no cap)."
    )
    group_messages_per_minute: int = Field(
        20, ge=0, description="New messages one group gets in any minute (0: no cap)."
    )


QueryMode = Literal["local", "global", "hybrid", "naive", "mix", "bypass"]


RetrievalStyle = Literal["context", "answer"]
KeywordSource = Literal["bot", "lightrag"]


class RagConfig(Section):
    """Long-term memory through a LightRAG server.

    The first six fields are the product spec's, with its defaults; the rest tune retrieval,
    privacy and resilience (see docs/RAG.md).
    """

    enabled: bool = False
    url: str = "http://localhost:9621"
    api_key: SecretStr = SecretStr("")
    query_mode: QueryMode = "hybrid"
    timeout_seconds: float = Field(10, gt=0, le=600, description="Whole call, wall clock.")
    recall_budget_seconds: float = Field(
        1.5, gt=0, le=600, description="Longest a turn waits for its query; it may run on."
    )
    index_min_length: int = Field(50, ge=0)
    retrieval_style: RetrievalStyle = "context"
    query_keywords: KeywordSource = "bot"
    context_max_chars: int = Field(4000, ge=200, le=100_000)
    circuit_failure_threshold: int = Field(3, ge=1, le=100)
    circuit_cooldown_seconds: float = Field(30, gt=0, le=3600)
    index_retry_max_seconds: float = Field(300, ge=1, le=86_400)
    shutdown_drain_seconds: float = Field(5, ge=0, le=600)


EmbeddingProvider = Literal["embedded", "openai", "off"]


class EmbeddingsConfig(Section):
    """Vectors for semantic recall: the bundled model, an OpenAI-compatible server, or none."""

    provider: EmbeddingProvider = Field(
        "embedded", description="embedded: bundled e5-small; openai: /v1/embeddings; off: words"
    )
    model: str = Field("text-embedding-3-small", min_length=1, description="For `openai`.")
    base_url: str = Field("", description="For `openai`; empty means OPENAI_BASE_URL.")
    timeout_seconds: float = Field(5, gt=0, le=120, description="One embeddings request.")


ExtractionMode = Literal["rules", "llm", "both"]


class MemoryConfig(Section):
    """Short-term structured memory (`# Memory`); see docs/MEMORY.md for how each field acts."""

    enabled: bool = True
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)
    soft_budget_tokens: int = Field(600, ge=50, le=20_000, description="Pack target size.")
    hard_budget_tokens: int = Field(1000, ge=50, le=40_000, description="Pack ceiling.")
    overflow_min_score: float = Field(
        0.7, ge=0, le=1, description="Items scoring this much may go past the soft budget."
    )
    min_score: float = Field(0.3, ge=0, le=1, description="Weaker matching items are left out.")
    semantic_top_k: int = Field(6, ge=0, le=50)
    procedural_top_k: int = Field(3, ge=0, le=50)
    episodic_top_k: int = Field(40, ge=0, le=50)
    document_top_k: int = Field(
        3, ge=0, le=50, description="Parts of documents the user shared, per recall."
    )
    promotion_min_confidence: float = Field(
        0.8, ge=0.5, le=1, description="Episodic items this confident become semantic/procedural."
    )
    decay_days: float = Field(365, gt=0, le=3650, description="Half-life of an item's recency.")
    lookback_days: int | None = Field(
        None, ge=1, le=3650, description="Older episodes are not recalled; None: all are."
    )
    episodic_ttl_days: int | None = Field(
        None, ge=1, le=3650, description="Days until an episode goes; None: kept (see the cap)."
    )
    max_episodes: int = Field(
        20_000, ge=100, le=1_000_000, description="Per user: the oldest episodes go past this."
    )
    loaded_items: int = Field(
        250_000,
        ge=1_000,
        le=10_000_000,
        description="Items of all users held in RAM (~3 kB each); past it, idle users' go.",
    )
    extraction: ExtractionMode = Field(
        "rules", description="Who finds facts in the user's messages: rules, an LLM, or both."
    )
    extraction_model: str = Field("", description="Model of LLM extraction; empty: llm.model.")
    extraction_batch_seconds: float = Field(
        3.0, ge=0, le=600, description="Quick turns of one user within this go into one call."
    )
    extraction_max_messages: int = Field(8, ge=1, le=50, description="Messages per call.")
    extraction_timeout_seconds: float = Field(
        20, gt=0, le=600, description="One extraction call, retries included."
    )

    @model_validator(mode="after")
    def _hard_budget_covers_soft(self) -> MemoryConfig:
        if self.hard_budget_tokens < self.soft_budget_tokens:
            raise ValueError("hardBudgetTokens must be at least softBudgetTokens")
        return self


class MediaConfig(Section):
    """Photos and documents people send (see docs/TELEGRAM.md): the limits of reading them."""

    image_max_side: int = Field(
        1024, ge=64, le=8192, description="An image's longest side, in pixels, sent to the model."
    )
    image_max_pixels: int = Field(
        50_000_000, ge=1_000_000, le=1_000_000_000, description="Larger images are refused."
    )
    document_max_pages: int = Field(300, ge=1, le=10_000, description="PDF pages read.")
    document_max_chars: int = Field(
        300_000, ge=1_000, le=10_000_000, description="A document's text is cut here."
    )
    read_timeout_seconds: float = Field(
        60, gt=0, le=600, description="Reading one file (text, resizing), wall clock."
    )
    read_cpu_seconds: int = Field(
        20, ge=1, le=600, description="CPU time reading one file may take; past it, too costly."
    )


class RateLimitConfig(Section):
    """Per-user message rate limit."""

    messages_per_minute: int = Field(20, ge=1, le=10_000)


class ToolsConfig(Section):
    """One enable flag per built-in tool; a tool without a flag here is on."""

    current_time: bool = True
    calculator: bool = True
    memory: bool = True
    skill: bool = Field(True, description="The model activates skills itself (/skill always).")
    reminders: bool = True

    def is_enabled(self, tool_name: str) -> bool:
        return bool(getattr(self, tool_name, True))


UploadFormat = Literal["ogg", "wav"]


class TranscriptionConfig(Section):
    """Voice notes, audio files and video notes to text, through `/v1/audio/transcriptions`."""

    enabled: bool = Field(True, description="false: voice notes get a 'please write' answer.")
    model: str = Field("whisper-1", min_length=1, description="e.g. whisper-large-v3 on Groq.")
    base_url: str = Field("", description="Empty: OPENAI_BASE_URL.")
    language: str = Field("", description="ISO-639-1 hint such as `en`; empty: detected.")
    upload_format: UploadFormat = Field(
        "ogg", description="ogg: Opus 16 kHz (small); wav: 16 kHz PCM (whisper.cpp's server)."
    )
    max_minutes: float = Field(
        30, gt=0, le=600, description="Longer recordings are refused, before download if said."
    )
    timeout_seconds: float = Field(60, gt=0, le=600, description="One request.")
    retry_attempts: int = Field(2, ge=1, le=10)
    show_transcript: bool = Field(True, description="Say 'I heard: …' before the answer.")


class VoiceRepliesConfig(Section):
    """Answers spoken through `/v1/audio/speech`, sent as Telegram voice notes (OGG/Opus)."""

    enabled: bool = Field(False, description="Needs a speech server; then /voice turns it on.")
    answer_voice_notes: bool = Field(True, description="A voice note gets a spoken answer too.")
    model: str = Field("tts-1", min_length=1)
    voice: str = Field("alloy", min_length=1)
    base_url: str = Field("", description="Empty: OPENAI_BASE_URL.")
    timeout_seconds: float = Field(60, gt=0, le=600, description="One request.")
    max_chars: int = Field(
        2000, ge=50, le=4096, description="Longer answers stay text only (OpenAI takes 4096)."
    )


class SpeechConfig(Section):
    """Speech in and out (see docs/TELEGRAM.md, "Voice")."""

    transcription: TranscriptionConfig = Field(default_factory=TranscriptionConfig)
    voice_replies: VoiceRepliesConfig = Field(default_factory=VoiceRepliesConfig)


class ModelPrice(Section):
    """What a model costs, per million tokens, in `usage.currency`."""

    input_per_million: float = Field(0, ge=0, description="Per million prompt tokens.")
    output_per_million: float = Field(0, ge=0, description="Per million completion tokens.")


class UsageConfig(Section):
    """Token usage, its estimated cost, and each user's daily budget (see bot/usage/)."""

    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="By model name; a model not listed has no estimate."
    )
    currency: str = Field("USD", min_length=1, max_length=10)
    daily_token_budget: int = Field(
        0, ge=0, description="Tokens one user may use a day (UTC); 0: no limit."
    )
    daily_cost_budget: float = Field(
        0, ge=0, description="Estimated cost one user may run up a day (UTC); 0: no limit."
    )

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The estimated cost of so many tokens of `model`; None when it has no price."""
        price = self.prices.get(model)
        if price is None:
            return None
        return (
            prompt_tokens * price.input_per_million + completion_tokens * price.output_per_million
        ) / 1_000_000


class RemindersConfig(Section):
    """Reminders the model sets for people (`reminders` tool, `/reminders`; docs/REMINDERS.md)."""

    default_timezone: str = Field(
        "UTC", min_length=1, description="IANA zone for users who set none (/reminders timezone)."
    )
    max_per_user: int = Field(50, ge=1, le=10_000, description="Reminders one user may keep.")
    min_repeat_minutes: float = Field(
        15, gt=0, le=525_600, description="The shortest gap between a repeating one's times."
    )
    max_text_chars: int = Field(500, ge=20, le=4000, description="Length of one reminder's text.")

    @field_validator("default_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            unknown = f"unknown time zone {value!r}; use an IANA name (Europe/Berlin)"
            raise ValueError(unknown) from None
        return value


MCP_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,30}")
"""A server's name prefixes its tools (`search__web_search`): letters, digits, `_` and `-`, so
the tool names stay valid for OpenAI (`^[a-zA-Z0-9_-]{1,64}$`)."""


class McpServerConfig(Section):
    """One MCP server (see docs/MCP.md): a command run over stdio, or a streamable HTTP URL.

    `${NAME}` in `args`, `env`, `url` and `headers` is replaced by the environment variable
    NAME when the server is started, so tokens stay out of this file.
    """

    enabled: bool = True
    command: str = Field("", description="stdio: the program to run, e.g. uvx or npx.")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict, description="stdio: extra environment (PATH, HOME... are passed)."
    )
    cwd: str = Field("", description="stdio: working directory; empty: the bot's.")
    url: str = Field("", description="streamable HTTP: the endpoint, e.g. https://host/mcp.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP: sent with every request (Authorization...)."
    )
    timeout_seconds: float = Field(30, gt=0, le=600, description="Each tool call.")
    start_timeout_seconds: float = Field(
        60, gt=0, le=600, description="Starting it (npx or uvx may download it first)."
    )
    allowed_tools: list[str] = Field(
        default_factory=list, description="The server's tool names offered; empty: all."
    )
    max_response_kilobytes: int = Field(
        1024, ge=16, le=65_536, description="A larger message from the server is refused."
    )
    in_groups: bool = Field(
        False,
        description="Also offered in groups and guest chats, where everyone reads what it "
        "returns: only for a server that reaches nothing private (web search).",
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either command (stdio) or url (streamable HTTP)")
        if self.url and not self.url.startswith(("http://", "https://", "${")):
            raise ValueError("url must start with http:// or https://")
        return self

    def offers(self, tool_name: str) -> bool:
        return not self.allowed_tools or tool_name in self.allowed_tools


class McpConfig(Section):
    """Tools from MCP servers, by server name; an edit applies without a restart. Every
    server's tools go into every LLM request, so what they may add is bounded."""

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    max_tools_per_server: int = Field(
        32, ge=1, le=128, description="A server's tools past this many are not offered."
    )
    max_schema_kilobytes: int = Field(
        8, ge=1, le=256, description="A tool whose argument schema is larger is not offered."
    )
    max_tools_kilobytes: int = Field(
        64,
        ge=4,
        le=4096,
        description="All servers' tools together (names, descriptions, schemas), in the "
        "order the servers are listed: the tools past it are not offered.",
    )

    @field_validator("servers")
    @classmethod
    def _names_fit_tool_names(
        cls, servers: dict[str, McpServerConfig]
    ) -> dict[str, McpServerConfig]:
        for name in servers:
            if not MCP_SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"server name {name[:40]!r}: use 1-30 letters, digits, _ or - "
                    "(it prefixes the tool names)"
                )
        return servers


class RuntimeConfig(Section):
    """The whole runtime config; read once per turn so an edit applies on the next turn."""

    llm: LlmConfig = Field(default_factory=LlmConfig)
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    rag: RagConfig = Field(default_factory=RagConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    rate_limit: RateLimitConfig = Field(default_factory=RateLimitConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    speech: SpeechConfig = Field(default_factory=SpeechConfig)
    usage: UsageConfig = Field(default_factory=UsageConfig)
    reminders: RemindersConfig = Field(default_factory=RemindersConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)


def unknown_keys(model: BaseModel, prefix: str = "") -> list[str]:
    """Dotted paths of keys in the file that no field knows, e.g. `rag.queryMod`."""
    found = [f"{prefix}{key}" for key in (model.model_extra or {})]
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = f"{prefix}{field.alias or name}."
        if isinstance(value, BaseModel):
            found += unknown_keys(value, key)
        elif isinstance(value, dict):  # named entries, such as `mcp.servers.<name>`
            for entry, item in value.items():
                if isinstance(item, BaseModel):
                    found += unknown_keys(item, f"{key}{entry}.")
    return found
