"""Memory over a long life: does `# Memory` hold what a question needs, months of chat later?

Each conversation of `bench/data/longconv.json` (see `bench/longconv_data.py`) is told to the
bot through the app as its user would: one session per `/new`, the app's clock at each
session's date, every user message answered by the assistant's reply from the data (the LLM
is a script, so the figures depend on memory alone). The next day, after `/new` and
`/remember off`, every question is asked and the `# Memory` section of the prompt the LLM
received is read.

In the same run, at the bot's own budget per question (the characters of its `# Memory`),
plain baselines over the raw user messages, each line `- [date] words`: BM25, the bundled e5
model's cosine (as recall embeds), and full context (everything said, both sides, dated).

Figures per split, per question kind and overall (`bench/longconv_scoring.py` has the rules):
- evidence recall: the share of questions whose answering messages are all held by the
  context (a message is held when one line holds 60% of its content words);
- answer containment: the share whose expected answers all appear in the context;
- mean characters and tokens (characters / 4, as the bot estimates them).
Target, on test: the bot's evidence recall at least the best baseline's + 0.10.

`--one-day` tells every session on the day before the questions instead, an hour apart: no
time passes for memory (nothing expires, every item is as recent as the next), which
separates what ranking and packing lose from what time takes away. The baselines keep the
sessions' real dates either way.

`--rag` turns LightRAG on and measures `# Relevant Memory` too (`bench/longconv_rag.py`);
`--conversations N` takes the first N conversations of each split.

    python -m bench.memory_longconv [--split dev|test|both] [--misses] [--one-day] [--rag]
        [--conversations N] [--dump FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from bench.eval_app import eval_app
from bench.longconv_data import KINDS, Conversation, Message, Question, load_conversations
from bench.longconv_scoring import Bm25, contains_answers, holds, pack
from bench.memory_recall import SilentChannel, memory_lines, memory_section
from bench.report import Figure, print_table
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.memory.packing import estimate_tokens
from bot.ports.llm import LlmRequest, LlmResponse, TextListener

NAME = "memory long conversations"
ARMS = ("bot", "bm25", "e5 cosine", "full context")
BASELINES = ("bm25", "e5 cosine")
MARGIN = 0.10


class PlannedReplies:
    """An `LlmPort` that answers each user message with the reply planned for it (the
    assistant's message in the data), and anything else with a line of its own."""

    def __init__(self) -> None:
        self.planned: dict[str, str] = {}
        self.requests: list[LlmRequest] = []

    async def complete(
        self, request: LlmRequest, on_text: TextListener | None = None
    ) -> LlmResponse:
        self.requests.append(request)
        users = [m.content for m in request.messages if m.role == "user"]
        answer = self.planned.get(users[-1] or "", "I'm not sure.") if users else "Okay."
        if on_text is not None:
            await on_text(answer)
        return LlmResponse(text=answer)


@dataclass
class Clock:
    """The app's clock, moved by the benchmark to each session's time."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass(frozen=True)
class Context:
    """What one arm gives a question: its lines (each scored on its own) and its text, which
    is what it costs. For the bot, the whole `# Memory` section: date headings and all."""

    lines: tuple[str, ...]
    section: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines) if self.section is None else self.section


@dataclass
class Scores:
    """One arm's contexts for the questions of one split."""

    asked: list[Question] = field(default_factory=list)
    recalled: list[bool] = field(default_factory=list)
    contained: list[bool] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, question: Question, context: Context, said: dict[str, str]) -> None:
        self.asked.append(question)
        self.recalled.append(evidence_held(context, question, said))
        self.contained.append(contains_answers(context.text, question.answers))
        self.chars.append(len(context.text))
        self.tokens.append(estimate_tokens(context.text) if context.lines else 0)

    def of(self, kind: str | None) -> Scores:
        picked = Scores()
        for at, question in enumerate(self.asked):
            if kind is None or question.kind == kind:
                picked.asked.append(question)
                picked.recalled.append(self.recalled[at])
                picked.contained.append(self.contained[at])
                picked.chars.append(self.chars[at])
                picked.tokens.append(self.tokens[at])
        return picked

    @property
    def recall(self) -> float:
        return _share(self.recalled)

    @property
    def containment(self) -> float:
        return _share(self.contained)

    @property
    def mean_chars(self) -> float:
        return statistics.fmean(self.chars) if self.chars else 0.0

    @property
    def mean_tokens(self) -> float:
        return statistics.fmean(self.tokens) if self.tokens else 0.0


def evidence_held(context: Context, question: Question, said: dict[str, str]) -> bool:
    """Whether every message that answers `question` is held by `context` (`said`: the
    conversation's messages by id)."""
    return all(holds(context.lines, said[evidence]) for evidence in question.evidence)


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def dated(started: datetime, message: Message) -> str:
    return f"- [{started:%Y-%m-%d}] {message.text}"


async def tell(
    app: BotApp,
    llm: PlannedReplies,
    clock: Clock,
    conversation: Conversation,
    one_day: bool = False,
) -> None:
    """Every session, as the user would: `/new` before each, at the session's time; with
    `one_day`, all of them on the day before the questions, one hour apart."""
    address = ChatAddress("eval", conversation.user)
    eve = _question_day(conversation) - timedelta(days=1)
    for number, session in enumerate(conversation.sessions):
        clock.now = eve + timedelta(hours=number) if one_day else session.started
        await _say(app, address, conversation.user, "/new", clock)
        messages = session.messages
        for at, message in enumerate(messages):
            if message.role != "user":
                continue
            reply = messages[at + 1].text if at + 1 < len(messages) else "Okay."
            llm.planned[message.text] = reply
            clock.now += timedelta(minutes=1)
            await _say(app, address, conversation.user, message.text, clock)
        await app.memory.drain()


async def _say(app: BotApp, address: ChatAddress, user: str, words: str, clock: Clock) -> None:
    await app.handle(IncomingMessage(address, user, words, received_at=clock.now), SilentChannel())


async def ask(
    app: BotApp,
    llm: PlannedReplies,
    clock: Clock,
    conversation: Conversation,
    prompts: list[str] | None = None,
) -> list[Context]:
    """The next day, after `/new` and `/remember off`: each question's `# Memory` (and its
    whole system prompt into `prompts`, when given)."""
    address = ChatAddress("eval", conversation.user)
    clock.now = _question_day(conversation)
    await _say(app, address, conversation.user, "/new", clock)
    await _say(app, address, conversation.user, "/remember off", clock)
    contexts = []
    for question in conversation.questions:
        clock.now += timedelta(minutes=1)
        await _say(app, address, conversation.user, question.text, clock)
        prompt = llm.requests[-1].messages[0].content or ""
        if prompts is not None:
            prompts.append(prompt)
        contexts.append(Context(tuple(memory_lines(prompt)), memory_section(prompt)))
    return contexts


def _question_day(conversation: Conversation) -> datetime:
    """The questions are asked the day after the last session."""
    return conversation.sessions[-1].started.replace(hour=12, minute=0) + timedelta(days=1)


async def baselines(
    app: BotApp, conversation: Conversation, budgets: Sequence[int]
) -> dict[str, list[Context]]:
    """BM25 and e5's cosine over the user's messages, each within the bot's characters, and
    everything said."""
    said = conversation.messages("user")
    lines = [dated(session.started, message) for session, message in said]
    texts = [message.text for _, message in said]
    questions = [question.text for question in conversation.questions]
    bm25 = Bm25(texts)
    vectors = await app.embedder.embed(texts)
    asked = await app.embedder.embed(questions)
    cosine = asked @ vectors.T
    everything = Context(tuple(dated(session.started, m) for session, m in conversation.messages()))
    found: dict[str, list[Context]] = {"bm25": [], "e5 cosine": [], "full context": []}
    for at, (question, budget) in enumerate(zip(questions, budgets, strict=True)):
        by_words = [lines[i] for i in bm25.rank(question)]
        by_meaning = [lines[i] for i in (-cosine[at]).argsort(kind="stable")]
        found["bm25"].append(Context(tuple(pack(by_words, budget))))
        found["e5 cosine"].append(Context(tuple(pack(by_meaning, budget))))
        found["full context"].append(everything)
    return found


async def evaluate(
    conversation: Conversation, work: Path, one_day: bool = False
) -> dict[str, list[Context]]:
    """Every arm's context for each of the conversation's questions."""
    clock = Clock(conversation.sessions[0].started)
    llm = PlannedReplies()
    app = eval_app(work, llm, clock=clock)
    try:
        await tell(app, llm, clock, conversation, one_day)
        bot = await ask(app, llm, clock, conversation)
        others = await baselines(app, conversation, [len(c.text) for c in bot])
    finally:
        await app.aclose()
    return {"bot": bot, **others}


async def score_split(
    split: str, show_misses: bool = False, one_day: bool = False, conversations: int | None = None
) -> dict[str, Scores]:
    scores = {arm: Scores() for arm in ARMS}
    for conversation in load_conversations(split=split)[:conversations]:
        said = {m.id: m.text for _, m in conversation.messages()}
        with tempfile.TemporaryDirectory() as tmp:
            contexts = await evaluate(conversation, Path(tmp), one_day)
        for arm in ARMS:
            for question, context in zip(conversation.questions, contexts[arm], strict=True):
                scores[arm].add(question, context, said)
        if show_misses:
            for question, context in zip(conversation.questions, contexts["bot"], strict=True):
                if not evidence_held(context, question, said):
                    print(f"[{split}] bot missed {question.id} ({question.kind}): {question.text}")
    return scores


def figures_of(
    split: str,
    scores: dict[str, Scores],
    mode: str,
    arms: Sequence[str] = ARMS,
    subject: str = "bot",
    sized: Sequence[str] = ("bot", "full context"),
    margin_label: str = "bot evidence recall",
    bench: str = NAME,
) -> list[Figure]:
    """The table's rows: each of `arms` overall, the evidence recall of each kind for
    `subject` and the baselines, the sizes of `sized`, and `subject`'s margin over the best
    baseline (the target, on test). `bench/longconv_rag.py` passes its own arms and name."""
    name = f"{bench}, {mode}"
    figures: list[Figure] = []
    for arm in arms:
        overall = scores[arm]
        figures.append(Figure(name, f"{split} evidence recall, {arm}", overall.recall, "", ""))
        figures.append(
            Figure(name, f"{split} answer containment, {arm}", overall.containment, "", "")
        )
    for kind in KINDS:
        for arm in (subject, *BASELINES):
            recall = scores[arm].of(kind).recall
            figures.append(Figure(name, f"{split} {kind}: evidence recall, {arm}", recall, "", ""))
    for arm in sized:
        chars, tokens = scores[arm].mean_chars, scores[arm].mean_tokens
        figures.append(Figure(name, f"{split} mean characters, {arm}", chars, "chars", ""))
        figures.append(Figure(name, f"{split} mean tokens, {arm}", tokens, "tokens", ""))
    margin = scores[subject].recall - max(scores[arm].recall for arm in BASELINES)
    target = split == "test"
    figures.append(
        Figure(
            name,
            f"{split} {margin_label} over the best baseline",
            margin,
            "",
            f">= +{MARGIN:.2f}" if target else "",
            margin >= MARGIN if target else None,
        )
    )
    return figures


def print_matrix(
    split: str, scores: dict[str, Scores], arms: Sequence[str] = ARMS, width: int = 16
) -> None:
    """Evidence recall / answer containment of every arm for every kind, and the sizes."""
    print(f"\n{split}: evidence recall / answer containment")
    print(f"{'kind':<8}" + "".join(f"{arm:>{width}}" for arm in arms))
    for kind in (*KINDS, None):
        cells = [scores[arm].of(kind) for arm in arms]
        row = "".join(f"{c.recall:>{width - 7}.2f} / {c.containment:.2f}" for c in cells)
        print(f"{kind or 'all':<8}{row}  ({len(cells[0].asked)} questions)")
    sizes = "".join(f"{scores[arm].mean_chars:>{width}.0f}" for arm in arms)
    print(f"{'chars':<8}{sizes}")


def run(
    splits: tuple[str, ...] = ("dev", "test"),
    show_misses: bool = False,
    one_day: bool = False,
    matrix: bool = False,
    conversations: int | None = None,
) -> list[Figure]:
    mode = "told in one day" if one_day else "told over months"
    figures: list[Figure] = []
    for split in splits:
        scores = asyncio.run(score_split(split, show_misses, one_day, conversations))
        if matrix:
            print_matrix(split, scores)
        figures += figures_of(split, scores, mode)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--misses", action="store_true", help="print each question the bot missed")
    parser.add_argument(
        "--one-day",
        action="store_true",
        help="tell every session on the day before the questions (no time passes for memory)",
    )
    parser.add_argument(
        "--rag",
        action="store_true",
        help="LightRAG on: both sections against the baselines (bench/longconv_rag.py)",
    )
    parser.add_argument(
        "--conversations", type=int, help="only the first N conversations of each split"
    )
    parser.add_argument("--dump", type=Path, help="with --rag: append each question's sections")
    args = parser.parse_args()
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    if args.rag:
        from bench import longconv_rag

        print_table(
            longconv_rag.run(splits, args.misses, args.one_day, args.conversations, args.dump)
        )
        return
    print_table(
        run(splits, args.misses, args.one_day, matrix=True, conversations=args.conversations)
    )


if __name__ == "__main__":
    main()
