"""A deterministic LLM for a real LightRAG server: it answers LightRAG's own prompts.

LightRAG (1.5.7, `lightrag/prompt.py`) asks its LLM for four things; this answers each in the
format LightRAG parses, from the text it was given, so a real knowledge graph is built:

- entity extraction: `entity<|#|>Name<|#|>Type<|#|>description` and
  `relation<|#|>A<|#|>B<|#|>keywords<|#|>description` rows, then `<|COMPLETE|>`;
- keyword extraction: `{"high_level_keywords": [...], "low_level_keywords": [...]}`;
- description summaries: the descriptions joined;
- answers (`/query`): the context lines that share words with the question.

Embeddings come from the fake server's embedder (`openai_server.py`): by default a bag of
words, where texts sharing words are close; `semantic_embedder()` for paraphrases.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from tests.fakes.openai_server import Reply

TUPLE = "<|#|>"
COMPLETE = "<|COMPLETE|>"
STOPWORDS = frozenset(
    """a an and are as at be by did do does for from had has have how i in is it its me my
    of on or our so that the their them then there these this to was we were what when where
    which who why will with you your user assistant date skill about after before can could
    would should please tell said here just also into than over very like know remember""".split()
)
_WORD = re.compile(r"[A-Za-zА-Яа-яЁё0-9][\w.-]*")
_INPUT = re.compile(r"---Input Text---\s*```\s*(.*?)```", re.DOTALL)
_QUERY = re.compile(r"User Query:\s*(.*?)\s*---Output---", re.DOTALL)


def lightrag_responder(body: dict[str, Any]) -> Reply:
    """Route one chat request from LightRAG to the right deterministic answer."""
    messages = body.get("messages", [])
    everything = "\n".join(str(m.get("content") or "") for m in messages)
    last = str(messages[-1].get("content") or "") if messages else ""
    if "identify and extract any missed" in last:
        return Reply(text=COMPLETE)
    if "Extract entities and relationships" in last:
        match = _INPUT.search(last)
        return Reply(text=extract_graph(match.group(1) if match else last))
    if "keyword extractor" in everything:
        match = _QUERY.search(last)
        return Reply(text=json.dumps(extract_keywords(match.group(1) if match else last)))
    if "synthesize a list of descriptions" in everything:
        return Reply(text=_summarise(last))
    return Reply(text=answer_from_context(everything, last))


def content_words(text: str) -> list[str]:
    """Distinct words worth indexing, in order of appearance."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text):
        word = raw.strip(".-_")
        if word.isdigit():
            keep = len(word) >= 2
        else:
            keep = len(word) >= 3 and word.lower() not in STOPWORDS
        if keep:
            seen.setdefault(word, None)
    return list(seen)


def extract_graph(text: str, max_entities: int = 12) -> str:
    """Entities: the content words of each sentence; relations: neighbours in a sentence."""
    rows: list[str] = []
    entities: dict[str, str] = {}
    relations: list[tuple[str, str, str]] = []
    for sentence in re.split(r"(?<=[.!?\n])\s+", text):
        sentence = sentence.strip()
        words = [
            w for w in content_words(sentence) if len(entities) < max_entities or w in entities
        ]
        for word in words:
            entities.setdefault(_title(word), sentence[:200])
        names = [_title(w) for w in words]
        for left, right in itertools.pairwise(names):
            if left != right:
                relations.append((left, right, sentence[:200]))
    for name, description in entities.items():
        rows.append(TUPLE.join(["entity", name, "Concept", f"{name}: {description}"]))
    for left, right, description in relations[: max_entities * 2]:
        if left in entities and right in entities:
            rows.append(TUPLE.join(["relation", left, right, "mentioned together", description]))
    rows.append(COMPLETE)
    return "\n".join(rows)


def extract_keywords(query: str) -> dict[str, list[str]]:
    words = content_words(query)
    return {"high_level_keywords": words[:3], "low_level_keywords": words}


def answer_from_context(prompt: str, question: str) -> str:
    """The context lines sharing the most words with the question, or LightRAG's no-context."""
    wanted = {w.lower() for w in content_words(question)}
    scored = []
    for line in prompt.splitlines():
        line = line.strip()
        if not line or line.startswith(("---", "```", "#")):
            continue
        overlap = len(wanted & {w.lower() for w in content_words(line)})
        if overlap:
            scored.append((overlap, line))
    if not scored:
        return "I have no relevant memory of that."
    scored.sort(key=lambda pair: -pair[0])
    return "From memory: " + " | ".join(line[:300] for _, line in scored[:3])


def _summarise(prompt: str) -> str:
    descriptions = re.findall(r'"description":\s*"(.*?)"', prompt)
    return " ".join(dict.fromkeys(descriptions)) or prompt[-500:]


def _title(word: str) -> str:
    return word[:1].upper() + word[1:]
