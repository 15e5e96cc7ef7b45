"""What LLM fact extraction asks and what comes back: the prompt, the operations, the schema.

The model sees the user's nearest items under aliases ("1", "2", …) and the new messages, and
answers with ADD / UPDATE / DELETE / NONE operations; `plan` maps them back to real ids.
`llm_extraction.py` runs the calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from bot.config.model import RuntimeConfig
from bot.conversation import ChatMessage
from bot.memory.model import ItemType, MemoryItem, new_item, shorten
from bot.memory.text import term_set
from bot.ports.llm import LlmRequest

LLM_CONFIDENCE = 0.9
"""Of an ADDed item: the user said it, a model worded it (rules give 0.75–0.95)."""
NEAREST_ITEMS = 10
"""Kept items shown to the model: enough for a user's profile, little enough to stay cheap."""
MAX_OPERATIONS = 20
MAX_TEXT_CHARS = 300
MAX_OUTPUT_TOKENS = 1024

# -- the answer ---------------------------------------------------------------------------

OpName = Literal["ADD", "UPDATE", "DELETE", "NONE"]
FactType = Literal["identity", "preference", "constraint", "fact", "howto"]


class Operation(BaseModel):
    """One change the model asks for. `id` is an alias from the prompt ("1"), never a real id."""

    model_config = ConfigDict(extra="ignore")

    op: OpName
    id: str = ""
    type: FactType = "fact"
    text: str = ""

    @field_validator("op", "type", "id", "text", mode="before")
    @classmethod
    def _lenient(cls, value: Any, info: ValidationInfo) -> Any:
        """A JSON-object-only server's model may say "add", 2 or null; the meaning is clear."""
        if value is None:
            value = ""
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            return value  # left for validation to refuse
        value = value.strip()
        if info.field_name == "op":
            return value.upper()
        if info.field_name == "type":
            return value.lower() or "fact"
        return value.lstrip("#") if info.field_name == "id" else value

    @model_validator(mode="after")
    def _complete(self) -> Operation:
        if self.op in ("ADD", "UPDATE") and not self.text:
            raise ValueError(f"{self.op} needs a text")
        if self.op in ("UPDATE", "DELETE") and not self.id:
            raise ValueError(f"{self.op} needs an id")
        self.text = shorten(self.text, MAX_TEXT_CHARS)
        return self


class Operations(BaseModel):
    operations: list[Operation]


def _string_enum(values: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


SCHEMA: dict[str, Any] = {
    "title": "memory_operations",
    "type": "object",
    "properties": {
        "operations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "op": _string_enum(get_args(OpName)),
                    "id": {"type": "string", "description": "An existing memory's id, or ''."},
                    "type": _string_enum(get_args(FactType)),
                    "text": {"type": "string", "description": "One sentence about the user."},
                },
                "required": ["op", "id", "type", "text"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["operations"],
    "additionalProperties": False,
}
"""`Operations` as a strict JSON schema: every field required, nothing else allowed."""

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def parse_operations(text: str) -> list[Operation]:
    """The model's answer as operations; `ValidationError` when it is not what SCHEMA says."""
    return Operations.model_validate_json(_FENCE.sub("", text.strip())).operations


# -- the question -------------------------------------------------------------------------

PROMPT = """\
You keep a memory of durable facts about one user. You get the user's existing memories, each \
with an id, and the user's new messages. Answer with JSON: {"operations": [{"op": ..., "id": \
..., "type": ..., "text": ...}]}.

op:
- ADD: a new durable fact the messages state. id "".
- UPDATE: a newer fact supersedes an existing memory. id: that memory's id; text: the whole \
new fact.
- DELETE: the messages say an existing memory is no longer true. id: that memory's id.
- NONE: nothing worth remembering. id "", text "".

type: identity (name, age, home, job, family), preference (likes and dislikes), constraint \
(diet, allergies, limits to respect), fact (other durable facts), howto (how the user does \
something: commands, procedures).
text: one short third-person sentence about the user, in the language of the messages, e.g. \
"The user's sister Olga lives in Porto."

Rules:
- Only what the user says about themselves, their people, work and ways. Return NONE for \
small talk, greetings, questions, hypotheticals and moods of the moment ("I'm tired today").
- Never ADD what an existing memory already says; UPDATE it only when its meaning changes.
- Use only ids from the existing memories. Never invent facts.

Examples:
Memories: [{"id": "1", "type": "identity", "text": "The user lives in Porto."}]
Messages: ["I moved to Berlin last month"]
{"operations": [{"op": "UPDATE", "id": "1", "type": "identity", "text": "The user lives in \
Berlin."}]}

Memories: [{"id": "1", "type": "constraint", "text": "The user is vegetarian."}]
Messages: ["I'm not vegetarian any more, I eat fish now"]
{"operations": [{"op": "DELETE", "id": "1", "type": "constraint", "text": ""}, {"op": "ADD", \
"id": "", "type": "preference", "text": "The user eats fish."}]}

Memories: []
Messages: ["my sister Olga lives in Porto", "and peanuts make me ill"]
{"operations": [{"op": "ADD", "id": "", "type": "fact", "text": "The user's sister Olga lives \
in Porto."}, {"op": "ADD", "id": "", "type": "constraint", "text": "The user is allergic to \
peanuts."}]}

Memories: [{"id": "1", "type": "preference", "text": "The user likes tea."}]
Messages: ["ugh, so tired today", "what's the weather in Lisbon?"]
{"operations": [{"op": "NONE", "id": "", "type": "fact", "text": ""}]}
"""


def extraction_request(
    config: RuntimeConfig,
    shown: dict[str, MemoryItem],
    messages: list[str],
    billed_to: str | None = None,
) -> LlmRequest:
    """The one call: PROMPT, then the memories under their aliases and the new messages;
    its usage counts against `billed_to` (the memory scope's owner)."""
    memories = [
        {"id": alias, "type": item.type.value, "text": shorten(item.content, MAX_TEXT_CHARS)}
        for alias, item in shown.items()
    ]
    question = (
        f"Memories: {json.dumps(memories, ensure_ascii=False)}\n"
        f"Messages: {json.dumps(messages, ensure_ascii=False)}"
    )
    memory = config.memory
    return LlmRequest(
        messages=[ChatMessage(role="system", content=PROMPT), ChatMessage.user(question)],
        model=memory.extraction_model or config.llm.model,
        temperature=0,
        max_output_tokens=MAX_OUTPUT_TOKENS,
        timeout_seconds=memory.extraction_timeout_seconds,
        retry_attempts=config.llm.retry_attempts,
        retry_max_seconds=min(config.llm.retry_max_seconds, memory.extraction_timeout_seconds),
        response_schema=SCHEMA,
        billed_to=billed_to,
    )


# -- from answer to changes ---------------------------------------------------------------


@dataclass
class Plan:
    """What one answer changes, in real ids; operations that cannot apply are only counted."""

    additions: list[MemoryItem] = field(default_factory=list)
    updates: list[tuple[str, ItemType, str]] = field(default_factory=list)
    deletions: list[str] = field(default_factory=list)
    ignored: int = 0
    ungrounded: int = 0
    """ADDs and UPDATEs whose words the user never said (of `ignored`)."""


ABOUT_THE_USER = term_set("the user user's users пользователь пользователя пользователю")
"""Words every fact has ("The user's sister...", "Пользователь живёт..."): they ground
nothing."""


def grounded(fact: str, heard: frozenset[str]) -> bool:
    """Whether `fact` comes from what the user said: at least half of its meaningful words
    (stemmed, "user" aside) are among `heard`, the terms of the user's messages. A weak model
    copies the prompt's examples ("The user lives in Berlin.") or words that were never the
    user's; a rewording of what they said ("peanuts make me ill": "The user is allergic to
    peanuts.") keeps enough of their words."""
    terms = term_set(fact) - ABOUT_THE_USER
    return bool(terms) and 2 * len(terms & heard) >= len(terms)


def plan(
    operations: list[Operation], shown: dict[str, MemoryItem], source: str, said: list[str]
) -> Plan:
    """Map aliases back to items. An unknown alias, a second change to one item, an ADD that
    repeats a shown item, an UPDATE that changes nothing, and an ADD or UPDATE not grounded in
    `said` (the user's messages) are ignored."""
    result = Plan()
    touched: set[str] = set()
    heard = term_set("\n".join(said))
    for op in operations[:MAX_OPERATIONS]:
        if op.op == "NONE":
            continue
        if op.op in ("ADD", "UPDATE") and not grounded(op.text, heard):
            result.ignored += 1
            result.ungrounded += 1
            continue
        if op.op == "ADD":
            if any(term_set(op.text) == term_set(item.content) for item in shown.values()):
                result.ignored += 1
            else:
                item_type = ItemType(op.type)
                result.additions.append(
                    new_item(item_type, op.text, source=f"llm:{source}", confidence=LLM_CONFIDENCE)
                )
            continue
        item = shown.get(op.id)
        unchanged = item is not None and (item.type.value, item.content) == (op.type, op.text)
        if item is None or item.id in touched or (op.op == "UPDATE" and unchanged):
            result.ignored += 1
            continue
        touched.add(item.id)
        if op.op == "UPDATE":
            result.updates.append((item.id, ItemType(op.type), op.text))
        else:
            result.deletions.append(item.id)
    return result
