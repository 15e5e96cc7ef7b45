"""One user's long-term recall when many users have told one LightRAG server similar things.

A real `lightrag-server` on loopback, its LLM the deterministic fake and its embeddings the
bot's bundled e5 model (so a question in other words than the fact can still find it).
Every user tells the bot three facts in their own words: a pet and its name, the city they
live in, their employer; each exchange is indexed as the bot does (owner-tagged documents sent
by `RagIndexer`). Then a sample of users asks paraphrased questions ("What's my dog called?",
"Which town am I based in?", "Who employs me?") through `LightRagAdapter.query` with their
own owner, and recall is the share of questions whose answer is in the returned context:

- alone: the server holds only that user's documents (cleared between users);
- shared: the server holds every user's documents, queried as the bot does (more candidates
  as more users share the server) and with LightRAG's default top-k, for comparison;
- leaks: other users' pet names, cities and employers found in any context (must be 0).

    python -m bench.rag_many_users [--users 50] [--sample 10] [--facts 3] [--mode hybrid]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import SecretStr

from bench.report import Figure, print_table
from bot.adapters.lightrag import LightRagAdapter
from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.rag.documents import exchange_document
from bot.rag.indexer import RagIndexer
from bot.rag.ledger import IndexLedger
from bot.rag.queue import IndexQueue
from bot.words import content_words
from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.lightrag_server import SEMANTIC_EMBEDDING_DIM, LightRagServer
from tests.fakes.openai_server import FakeOpenAiServer, semantic_embedder

NAME = "rag many users"
USERS = 50
SAMPLE = 10
RAG_KEY = "bench-rag-key"
SINCE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

ANIMALS = ["dog", "cat", "parrot", "rabbit", "hamster"]
PETS = """Biscuit Pepper Mochi Jujube Tofu Waffles Nutmeg Pickles Ziggy Marmalade Clementine
Gizmo Noodle Pretzel Sprocket Truffle Basil Cricket Dumpling Fennel Hazel Inkwell Jellybean
Kipper Lentil Muffin Nimbus Olive Pistachio Radish Saffron Tamale Umber Velvet Wasabi Yuzu
Zucchini Acorn Bramble Cobalt Domino Espresso Fig Gumdrop Hopscotch Igloo Jasper Kumquat
Licorice Mango Nacho Oatmeal Paprika Quince Rooibos""".split()
CITIES = """Lisbon Porto Utrecht Ghent Bergen Tampere Aarhus Graz Brno Krakow Ljubljana Zagreb
Valencia Bilbao Lyon Nantes Turin Bologna Seville Malaga Gdansk Riga Tallinn Vilnius Cork
Galway Leeds Bristol Glasgow Cardiff Munich Leipzig Dresden Basel Lausanne Salzburg Linz Debrecen
Plovdiv Varna Thessaloniki Patras Izmir Tbilisi Yerevan Montreal Halifax Denver Portland Austin
Savannah Tucson""".split()
EMPLOYERS = """Nordwind Logistics|Acme Robotics|Bluefin Analytics|Cedar Health|Driftwood Games|
Ember Foods|Fjord Shipping|Granite Insurance|Harbor Media|Ironbark Mining|Juniper Networks|
Kestrel Aviation|Lumen Optics|Meridian Bank|Northstar Energy|Oakridge Pharma|Pinecone Labs|
Quarry Construction|Redwood Textiles|Sable Security|Tidewater Utilities|Umbra Studios|
Vantage Telecom|Willow Publishing|Xylem Water|Yellowtail Fisheries|Zephyr Motors|Atlas Freight|
Beacon Schools|Copperleaf Farms|Dunmore Brewing|Elmstead Hotels|Foxglove Cosmetics|
Gullwing Airlines|Heron Biotech|Ivory Furniture|Jetstream Couriers|Kingfisher Retail|
Larkspur Software|Moorland Dairy|Nettle Consulting|Osprey Satellites|Pebble Payments|
Quill Legal|Rowan Architects|Starling Robotics|Thistle Clothing|Upland Solar|Vireo Semiconductors|
Wren Ceramics|Yarrow Gardens""".replace("\n", "").split("|")

PET_SAYINGS = [
    ("We adopted a {animal} last spring and named her {pet}.", "How lovely, congratulations!"),
    ("My {animal} {pet} chewed through the sofa again today.", "Oh no, poor sofa."),
    ("I have a {animal} called {pet}; she turns three in May.", "Happy early birthday to her!"),
    ("Our family {animal} goes by the name {pet}.", "That's a sweet name for a {animal}."),
    ("{pet}, my {animal}, needs a vet appointment next week.", "I hope the visit goes well."),
]
CITY_SAYINGS = [
    ("I live in {city} these days.", "Good to know, thanks for telling me."),
    ("Home for me is {city}, near the old harbour.", "That sounds like a nice place to live."),
    ("I moved to {city} two years ago and I'm staying.", "Glad you've settled in."),
    ("My flat is in {city}, close to the central station.", "Handy for travelling."),
    ("These days I'm settled in {city} for good.", "Noted, I'll keep that in mind."),
]
EMPLOYER_SAYINGS = [
    ("I work at {employer} as a data analyst.", "Sounds like interesting work."),
    ("My employer is {employer}.", "Got it, I'll remember that."),
    ("I've been on the payroll of {employer} since 2019.", "That's a good long stretch."),
    ("I joined {employer} last year as a designer.", "Congratulations on the job."),
    ("I spend my weekdays at {employer}, building their billing system.", "Billing is hard!"),
]
PET_QUESTIONS = ["What's my {animal} called?", "What name did I give my pet?"]
CITY_QUESTIONS = ["Which town am I based in?", "Where do I live?"]
EMPLOYER_QUESTIONS = ["Who employs me?", "Which company do I work for?"]


@dataclass(frozen=True)
class Person:
    """One user and the facts they tell the bot (pet, city, employer; the first `told`), one
    exchange each."""

    owner: str
    animal: str
    pet: str
    city: str
    employer: str
    style: int
    told: int = 3

    @property
    def facts(self) -> tuple[str, ...]:
        return (self.pet, self.city, self.employer)[: self.told]

    def exchanges(self) -> list[tuple[str, str]]:
        """(user message, assistant reply) pairs, worded by this user's style."""
        fields = {"animal": self.animal, "pet": self.pet, "city": self.city}
        fields["employer"] = self.employer
        sayings = (PET_SAYINGS, CITY_SAYINGS, EMPLOYER_SAYINGS)[: self.told]
        return [
            (said.format(**fields), reply.format(**fields))
            for said, reply in (group[self.style % len(group)] for group in sayings)
        ]

    def questions(self) -> list[tuple[str, str]]:
        """(question, the answer it needs) pairs, none worded as the user said the fact."""
        asked = [(q.format(animal=self.animal), self.pet) for q in PET_QUESTIONS]
        asked += [(q, self.city) for q in CITY_QUESTIONS]
        asked += [(q, self.employer) for q in EMPLOYER_QUESTIONS]
        return [(question, answer) for question, answer in asked if answer in self.facts]

    def shares_a_word(self, question: str) -> bool:
        """Whether `question` has a meaningful word in common with what the user said."""
        said = {w.lower() for pair in self.exchanges() for w in content_words(" ".join(pair))}
        return any(w.lower() in said for w in content_words(question))


def people(count: int, told: int = 3) -> list[Person]:
    """`count` users (at most 50) with distinct pet names, cities and employers, each telling
    the first `told` of their three facts."""
    if count > min(len(PETS), len(CITIES), len(EMPLOYERS)):
        raise ValueError(f"at most {min(len(PETS), len(CITIES), len(EMPLOYERS))} users")
    persons = [
        Person(
            owner=str(7_100_000 + 37 * i),
            animal=ANIMALS[i % len(ANIMALS)],
            pet=PETS[i],
            city=CITIES[i],
            employer=EMPLOYERS[i],
            style=i + i // len(ANIMALS),  # not in step with the animals
            told=told,
        )
        for i in range(count)
    ]
    facts = [fact for person in persons for fact in person.facts]
    for fact in facts:  # a leak is told by a fact's name: no name may contain another
        assert sum(mentions(other, fact) for other in facts) == 1, fact
    return persons


def mentions(context: str, fact: str) -> bool:
    return re.search(rf"\b{re.escape(fact)}\b", context) is not None


@dataclass
class Score:
    questions: int = 0
    recalled: int = 0
    unworded: int = 0
    """Questions sharing no meaningful word with what the user said: only meaning finds them."""
    unworded_recalled: int = 0
    leaks: int = 0
    """Other users' facts seen in the contexts (each question and fact counted once)."""
    misses: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.recalled / self.questions if self.questions else 0.0

    @property
    def unworded_recall(self) -> float:
        return self.unworded_recalled / self.unworded if self.unworded else 0.0

    def add(self, other: Score) -> None:
        for name in ("questions", "recalled", "unworded", "unworded_recalled", "leaks"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses += other.misses
        self.leaked += other.leaked


async def ask(
    adapter: LightRagAdapter, config: RuntimeConfig, asking: list[Person], everyone: list[Person]
) -> Score:
    """Each of `asking` asks their questions, each question a turn with `config`; count
    answers found and other users' facts."""
    score = Score()
    for person in asking:
        foreign = [f for other in everyone if other.owner != person.owner for f in other.facts]
        for question, answer in person.questions():
            context = await adapter.query(question, person.owner, config)
            found = mentions(context, answer)
            score.questions += 1
            score.recalled += found
            if not person.shares_a_word(question):
                score.unworded += 1
                score.unworded_recalled += found
            if not found:
                score.misses.append(f"{person.owner}: {question} ({answer})")
            leaked = [fact for fact in foreign if mentions(context, fact)]
            score.leaks += len(leaked)
            score.leaked += [f"{person.owner}: {question} -> {fact}" for fact in leaked]
    return score


class ManyUsersBench:
    """A LightRAG server with semantic embeddings, and the bot's indexer and adapter for it.

    The caller starts and stops `server` (its LLM at `llm_url` must serve
    `semantic_embedder()`); `index` and `aclose` run on the caller's event loop.
    """

    def __init__(self, work: Path, llm_url: str, mode: str = "hybrid") -> None:
        self.mode = mode
        self.server = LightRagServer(
            work / "lightrag", llm_url, RAG_KEY, embedding_dim=SEMANTIC_EMBEDDING_DIM
        )
        config_path = work / "runtime-config.json"
        config_path.write_text(
            json.dumps({"rag": {"enabled": True, "url": self.server.url, "queryMode": mode}})
        )
        self.config = RuntimeConfigStore(config_path)
        self.ledger = IndexLedger(work / "rag" / "ledger")
        self._uploader = LightRagAdapter(self.config, SecretStr(RAG_KEY))
        self.indexer = RagIndexer(
            IndexQueue(work / "rag" / "queue"), self._uploader, self.ledger, self.config
        )

    def adapter(self, owners: Callable[[], int] | None = None) -> LightRagAdapter:
        """An adapter as the bot builds it: `owners` defaults to the ledger's count."""
        counted = owners or self.ledger.owner_count
        return LightRagAdapter(self.config, SecretStr(RAG_KEY), owners=counted)

    async def index(self, persons: list[Person]) -> float:
        """Send every exchange of `persons` through the bot's indexer; seconds until processed."""
        self.indexer.start()
        started = time.perf_counter()
        already = await asyncio.to_thread(self.server.processed_count)
        documents = 0
        for n, person in enumerate(persons):
            for k, (said, reply) in enumerate(person.exchanges()):
                at = SINCE + timedelta(days=n, minutes=k)
                chat = f"telegram:{person.owner}"
                await self.indexer.enqueue(exchange_document(person.owner, chat, said, reply, at))
                documents += 1
        for _ in range(6000):  # the worker uploads in milliseconds; the server then works
            if not self.indexer.queue.depth:
                break
            await asyncio.sleep(0.05)
        # Recall, not speed, is measured here: on a busy 2-core machine e5 may take the server
        # several seconds a document, so the wait allows an hour.
        await asyncio.to_thread(self.server.wait_until_processed, already + documents, 3600)
        return time.perf_counter() - started

    async def clear(self, persons: list[Person]) -> None:
        """Empty the server, and the ledger of `persons`, as if they had never said a thing."""
        await asyncio.to_thread(self.server.clear)
        for person in persons:
            self.ledger.clear(person.owner)

    async def aclose(self) -> None:
        await self.indexer.stop(0)
        await self._uploader.aclose()


async def measure(users: int, sample: int, told: int, mode: str) -> list[Figure]:
    everyone = people(users, told)
    asking = random.Random(7).sample(everyone, min(sample, users))
    began = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAiServer(responder=lightrag_responder, embedder=semantic_embedder()) as llm,
    ):
        bench = ManyUsersBench(Path(tmp), llm.base_url, mode)
        bench.server.start()
        scaled, unscaled = bench.adapter(), bench.adapter(owners=lambda: 1)
        try:
            alone = Score()
            for person in asking:
                await bench.clear(everyone)
                await bench.index([person])
                alone.add(await ask(scaled, bench.config.current(), [person], everyone))
            await bench.clear(everyone)
            index_seconds = await bench.index(everyone)
            started = time.perf_counter()
            before = await ask(unscaled, bench.config.current(), asking, everyone)
            before_ms = (time.perf_counter() - started) * 1000 / before.questions
            started = time.perf_counter()
            after = await ask(scaled, bench.config.current(), asking, everyone)
            after_ms = (time.perf_counter() - started) * 1000 / after.questions
        finally:
            await bench.aclose()
            await scaled.aclose()
            await unscaled.aclose()
            bench.server.stop()
    total = time.perf_counter() - began
    for miss in alone.misses:
        print(f"missed alone: {miss}")
    for miss in after.misses:
        print(f"missed with {users} users: {miss}")
    for leak in alone.leaked + before.leaked + after.leaked:
        print(f"LEAKED: {leak}")
    leaks = alone.leaks + before.leaks + after.leaks
    crowd = f"{users} users"
    return [
        Figure(NAME, f"recall, 1 user alone ({alone.questions} questions)", alone.recall, "", ""),
        Figure(NAME, f"recall, {crowd}, LightRAG's default top-k", before.recall, "", ""),
        Figure(
            NAME,
            f"recall, {crowd} (the bot's query)",
            after.recall,
            "",
            f">= alone - 0.05 ({alone.recall - 0.05:.2f})",
            after.recall >= alone.recall - 0.05,
        ),
        Figure(NAME, f"no word shared ({alone.unworded} q.): alone", alone.unworded_recall, "", ""),
        Figure(NAME, f"no word shared: {crowd}, default top-k", before.unworded_recall, "", ""),
        Figure(NAME, f"no word shared: {crowd}, the bot's", after.unworded_recall, "", ""),
        Figure(NAME, "other users' facts in any context", leaks, "", "0", leaks == 0),
        Figure(NAME, f"indexing {len(everyone) * told} documents", index_seconds, "s", ""),
        Figure(NAME, f"query with {crowd}, default top-k, mean", before_ms, "ms", ""),
        Figure(NAME, f"query with {crowd} (the bot's), mean", after_ms, "ms", ""),
        Figure(NAME, "whole benchmark", total, "s", "< 180", total < 180),
    ]


def run(
    users: int = USERS, sample: int = SAMPLE, told: int = 3, mode: str = "hybrid"
) -> list[Figure]:
    return asyncio.run(measure(users, sample, told, mode))


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=USERS)
    parser.add_argument("--sample", type=int, default=SAMPLE)
    parser.add_argument("--facts", type=int, default=3, choices=(1, 2, 3))
    parser.add_argument("--mode", default="hybrid")
    args = parser.parse_args()
    print_table(run(args.users, args.sample, args.facts, args.mode))


if __name__ == "__main__":
    main()
