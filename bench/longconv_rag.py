"""Long conversations with LightRAG on: do `# Memory` and `# Relevant Memory` together hold
what a question needs, and does LightRAG's block earn its characters?

`python -m bench.memory_longconv --rag` runs this. The conversations are told through the app
exactly as `bench/memory_longconv.py` tells them (its `tell`, `ask` and `baselines`), but with
LightRAG on: a real `lightrag-server` on loopback, its LLM the deterministic fake
(`tests/fakes/lightrag_llm.py`) and its embeddings the bot's bundled e5 model, so its chunk
and entity search is semantic. Every exchange the bot indexes is processed by the server
before the first question (the bot's index queue empty, no document left in the server's
pipeline); the server is emptied between conversations, so each user is alone on it.

Arms, per split: `# Memory` alone, `# Relevant Memory` alone, both sections together, and
BM25, e5 cosine and full context at the characters of both sections together (the combined
budget). A turn waits for its query as long as it takes (`recallBudgetSeconds` =
`timeoutSeconds`), so a busy machine does not turn a slow answer into an empty section.
Target, on test: both sections at least the best baseline's evidence recall + 0.10, or
`# Relevant Memory` shrunk to what it earns (`bot/rag/relevance.py`). `--dump FILE` appends
each question's sections, for `bench/longconv_rag_rules.py` to replay rules on.

A run indexes about 90 exchanges a conversation, 1.5-2 minutes each on two cores: seven took
11 min 24 s at load ~1 (2026-12-05); `--conversations N` takes the first N of each split.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.eval_app import eval_app
from bench.longconv_data import Conversation, load_conversations
from bench.memory_longconv import (
    BASELINES,
    Clock,
    Context,
    PlannedReplies,
    Scores,
    ask,
    baselines,
    figures_of,
    print_matrix,
    tell,
)
from bench.memory_recall import memory_lines
from bench.report import Figure
from bot.app import BotApp
from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.lightrag_server import SEMANTIC_EMBEDDING_DIM, LightRagServer
from tests.fakes.openai_server import FakeOpenAiServer, semantic_embedder

NAME = "memory long conversations, LightRAG on"
RAG_KEY = "bench-longconv-rag-key"
SECTIONS = ("# Memory", "# Relevant Memory", "both")
ARMS = (*SECTIONS, *BASELINES, "full context")
QUERY_SECONDS = 120.0
"""A query's whole deadline and the turn's wait for it: recall is measured, not speed."""
INDEX_SECONDS = 3600.0
_FENCE = re.compile(r"^\[(?:end of )?untrusted memory [^\]]*\]$")


@dataclass(frozen=True)
class Asked:
    """One question's sections, as the prompt the LLM received held them."""

    memory: Context
    relevant: Context

    @property
    def both(self) -> Context:
        return Context(self.memory.lines + self.relevant.lines)


def relevant_lines(system_prompt: str) -> list[str]:
    """The lines of the `# Relevant Memory` section inside its fence (headings included, as
    they take characters too); empty when the section is missing."""
    heading = "# Relevant Memory\n"
    if heading not in system_prompt:
        return []
    section = system_prompt.split(heading, 1)[1].split("\n\n# ", 1)[0]
    return [line for line in section.splitlines() if line.strip() and not _FENCE.match(line)]


def sections_of(prompt: str) -> Asked:
    return Asked(Context(tuple(memory_lines(prompt))), Context(tuple(relevant_lines(prompt))))


class RagRun:
    """One LightRAG server (and its fake LLM with e5 embeddings) for a whole run."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self._llm = FakeOpenAiServer(responder=lightrag_responder, embedder=semantic_embedder())
        self.server: LightRagServer | None = None

    def __enter__(self) -> RagRun:
        self._llm.__enter__()
        self.server = LightRagServer(
            self.work / "lightrag",
            self._llm.base_url,
            RAG_KEY,
            embedding_dim=SEMANTIC_EMBEDDING_DIM,
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.stop()
        self._llm.__exit__(None, None, None)

    def rag_config(self) -> dict[str, object]:
        assert self.server is not None
        return {
            "enabled": True,
            "url": self.server.url,
            "timeoutSeconds": QUERY_SECONDS,
            "recallBudgetSeconds": QUERY_SECONDS,
            "indexRetryMaxSeconds": 5,
            "circuitCooldownSeconds": 1,
            "shutdownDrainSeconds": 0,
        }


async def wait_indexed(app: BotApp, server: LightRagServer) -> dict[str, int]:
    """Until the bot's index queue is empty and the server has nothing left in its pipeline;
    the server's status counts then."""
    for _ in range(int(INDEX_SECONDS * 10)):  # the worker uploads in milliseconds
        if not app.indexer.queue.depth:
            break
        await asyncio.sleep(0.1)
    if app.indexer.queue.depth:
        raise RuntimeError(f"{app.indexer.queue.depth} documents still queued after the wait")
    return await asyncio.to_thread(server.wait_until_processed, 1, INDEX_SECONDS)


async def evaluate(
    conversation: Conversation, work: Path, rag: RagRun, one_day: bool = False
) -> tuple[list[Asked], dict[str, list[Context]], dict[str, float]]:
    """Each question's sections, the baselines at their combined characters, and timings."""
    assert rag.server is not None
    await asyncio.to_thread(rag.server.clear)
    clock = Clock(conversation.sessions[0].started)
    llm = PlannedReplies()
    app = eval_app(work, llm, clock=clock, rag=rag.rag_config(), rag_api_key=RAG_KEY)
    timings: dict[str, float] = {}
    await app.start()
    try:
        began = time.perf_counter()
        await tell(app, llm, clock, conversation, one_day)
        timings["tell"] = time.perf_counter() - began
        counts = await wait_indexed(app, rag.server)
        timings["index wait"] = time.perf_counter() - began - timings["tell"]
        timings["documents"] = counts.get("processed", 0)
        timings["failed"] = counts.get("failed", 0)
        prompts: list[str] = []
        began = time.perf_counter()
        await ask(app, llm, clock, conversation, prompts)
        timings["ask"] = time.perf_counter() - began
        asked = [sections_of(prompt) for prompt in prompts]
        others = await baselines(app, conversation, [len(a.both.text) for a in asked])
    finally:
        await app.aclose()
    return asked, others, timings


async def score_split(
    split: str,
    rag: RagRun,
    conversations: int | None = None,
    one_day: bool = False,
    dump: Path | None = None,
) -> dict[str, Scores]:
    scores = {arm: Scores() for arm in ARMS}
    dumped: list[dict[str, object]] = []
    for conversation in load_conversations(split=split)[:conversations]:
        said = {m.id: m.text for _, m in conversation.messages()}
        with tempfile.TemporaryDirectory() as tmp:
            asked, others, timings = await evaluate(conversation, Path(tmp), rag, one_day)
        print(
            f"[{split}] {conversation.id}: told in {timings['tell']:.0f} s, indexing waited "
            f"{timings['index wait']:.0f} s more ({timings['documents']:.0f} documents, "
            f"{timings['failed']:.0f} failed), asked in {timings['ask']:.0f} s",
            flush=True,
        )
        contexts = {
            "# Memory": [a.memory for a in asked],
            "# Relevant Memory": [a.relevant for a in asked],
            "both": [a.both for a in asked],
            **others,
        }
        for arm in ARMS:
            for question, context in zip(conversation.questions, contexts[arm], strict=True):
                scores[arm].add(question, context, said)
        for question, sections in zip(conversation.questions, asked, strict=True):
            dumped.append(
                {
                    "split": split,
                    "conversation": conversation.id,
                    "question": question.id,
                    "kind": question.kind,
                    "text": question.text,
                    "evidence": [said[e] for e in question.evidence],
                    "answers": list(question.answers),
                    "memory": list(sections.memory.lines),
                    "relevant": list(sections.relevant.lines),
                }
            )
    if dump is not None:
        with dump.open("a", encoding="utf-8") as out:
            for row in dumped:
                out.write(json.dumps(row) + "\n")
    return scores


def misses(split: str, scores: dict[str, Scores]) -> None:
    """The questions both sections missed (`--misses`)."""
    both = scores["both"]
    for question, recalled in zip(both.asked, both.recalled, strict=True):
        if not recalled:
            print(
                f"[{split}] both sections missed {question.id} ({question.kind}): {question.text}"
            )


def run(
    splits: Sequence[str] = ("dev", "test"),
    show_misses: bool = False,
    one_day: bool = False,
    conversations: int | None = None,
    dump: Path | None = None,
) -> list[Figure]:
    logging.getLogger("bot").setLevel(logging.ERROR)
    mode = "told in one day" if one_day else "told over months"
    figures: list[Figure] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, RagRun(Path(tmp)) as rag:
        for split in splits:
            scores = asyncio.run(score_split(split, rag, conversations, one_day, dump))
            print_matrix(f"{split}, LightRAG on", scores, ARMS, width=19)
            if show_misses:
                misses(split, scores)
            figures += figures_of(
                split,
                scores,
                mode,
                ARMS,
                subject="both",
                sized=SECTIONS,
                margin_label="both sections' evidence recall",
                bench=NAME,
            )
    figures.append(Figure(NAME, "whole run", time.perf_counter() - began, "s", ""))
    return figures
