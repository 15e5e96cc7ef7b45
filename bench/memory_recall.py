"""Recall of planted facts across `/new`: does `# Memory` hold the fact a question needs?

One session states 33 facts (identity, preferences, constraints, work, how-tos, English and
Russian), `/new` starts a fresh session, then one question per fact is asked. For each
question the system prompt the LLM received is read: recall@k is the share of questions whose
expected answer appears in the first k lines of `# Memory` (lines are best first). The LLM is
a deterministic script, so the figure depends on memory alone.

    python -m bench.memory_recall
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.report import Figure, print_table
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.settings import Settings
from tests.fakes.llm import ScriptedLlm, text

REPO = Path(__file__).resolve().parent.parent
K_VALUES = (1, 3, 6)
TARGET_AT_6 = 0.9


@dataclass(frozen=True)
class PlantedFact:
    statement: str
    question: str
    expected: str
    """Text that must appear in a `# Memory` line for the fact to count as recalled."""


FACTS = [
    PlantedFact("Hi! My name is Marta Kowalski.", "What's my name?", "Marta"),
    PlantedFact("I live in Lisbon, near Alfama.", "Which city do I live in?", "Lisbon"),
    PlantedFact("I work at Acme Robotics.", "Where do I work these days?", "Acme"),
    PlantedFact("I'm a firmware engineer.", "What's my job?", "firmware"),
    PlantedFact(
        "Remember that my home server is at 10.0.0.5.",
        "What's the IP address of my home server?",
        "10.0.0.5",
    ),
    PlantedFact(
        "We deploy with Kubernetes on GKE.", "How do we deploy our services?", "Kubernetes"
    ),
    PlantedFact("I prefer tea over coffee.", "Should I order tea or coffee?", "tea over"),
    PlantedFact("I'm allergic to peanuts.", "Which nuts am I allergic to?", "peanuts"),
    PlantedFact("My dog's name is Pixel.", "What is my dog called?", "Pixel"),
    PlantedFact("My favorite color is teal.", "What's my favorite color?", "teal"),
    PlantedFact(
        "Our staging database is Postgres 15.", "Which database do we run in staging?", "Postgres"
    ),
    PlantedFact(
        "To restart the VPN, run sudo systemctl restart wg-quick@wg0.",
        "How do I restart the VPN again?",
        "wg-quick@wg0",
    ),
    PlantedFact("My wife's birthday is on May 3rd.", "When is my wife's birthday?", "May 3rd"),
    PlantedFact("I use Neovim with LazyVim.", "Which editor do I use?", "Neovim"),
    PlantedFact(
        "We use Sentry for error tracking.", "What do we use for error tracking?", "Sentry"
    ),
    PlantedFact("My laptop is a ThinkPad X1 Carbon.", "What laptop do I have?", "ThinkPad"),
    PlantedFact("I'm vegetarian.", "Can you suggest a dinner recipe for tonight?", "vegetarian"),
    PlantedFact(
        "Always answer in British English.", "Which spelling should your answers use?", "British"
    ),
    PlantedFact("My daughter Lena is 7 years old.", "How old is Lena now?", "7 years"),
    PlantedFact("Our main repository is on GitLab.", "Where is our main repository?", "GitLab"),
    PlantedFact("I'm from Kraków originally.", "Where am I from?", "Kraków"),
    PlantedFact("My car is a 2015 Honda Civic.", "What car do I drive?", "Civic"),
    PlantedFact(
        "The fix for the flaky login test was pinning chromedriver to 114.",
        "How did we fix the flaky login test?",
        "chromedriver",
    ),
    PlantedFact("Our CI runs on GitHub Actions.", "What does our CI run on?", "GitHub Actions"),
    PlantedFact(
        "I like hiking in the mountains on weekends.",
        "What do I like doing on weekends?",
        "hiking",
    ),
    PlantedFact(
        "Remember that my gym membership expires in March.",
        "When does my gym membership expire?",
        "March",
    ),
    PlantedFact("I'm 34 years old.", "How old am I?", "34"),
    PlantedFact(
        "We host our docs on Read the Docs.", "Where do we host the docs?", "Read the Docs"
    ),
    PlantedFact("My manager is Priya.", "Who is my manager?", "Priya"),
    PlantedFact(
        "Remember that the office wifi password is tangerine42.",
        "What's the office wifi password?",
        "tangerine42",
    ),
    PlantedFact("Запомни, что код от домофона 4512.", "Какой код от домофона?", "4512"),
    PlantedFact("Мы храним бэкапы в S3.", "Где мы храним бэкапы?", "S3"),
    PlantedFact("I prefer dark mode in every app.", "Do I like light or dark themes?", "dark mode"),
]


@dataclass(frozen=True)
class RecallReport:
    questions: int
    hits_at: dict[int, int]
    misses_at_6: list[str]

    def recall_at(self, k: int) -> float:
        return self.hits_at[k] / self.questions


def memory_section(system_prompt: str) -> str:
    """The text of the `# Memory` section below its title; empty when it is missing."""
    if "# Memory\n" not in system_prompt:
        return ""
    return system_prompt.split("# Memory\n", 1)[1].split("\n\n# ", 1)[0]


def memory_lines(system_prompt: str) -> list[str]:
    """The item lines of the `# Memory` section (not its date headings), in order; empty when
    the section is missing."""
    return [line for line in memory_section(system_prompt).splitlines() if line.startswith("- ")]


async def evaluate(work: Path, facts: list[PlantedFact] = FACTS) -> RecallReport:
    """Plant `facts` in one session, `/new`, ask each question; count hits in `# Memory`."""
    shutil.copytree(REPO / "preferences", work / "preferences", dirs_exist_ok=True)
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        openai_base_url="http://127.0.0.1:9/v1",
        data_dir=work / "data",
        runtime_config_path=work / "preferences" / "runtime-config.json",
        prompts_dir=work / "preferences" / "prompts",
    )
    llm = ScriptedLlm(*(text("Got it, I'll keep that in mind.") for _ in facts))
    app = BotApp.build(settings, llm=llm)
    channel = SilentChannel()
    address = ChatAddress("eval", "marta")

    async def say(words: str) -> None:
        await app.handle(IncomingMessage(address, "marta", words), channel)

    for fact in facts:
        await say(fact.statement)
    await say("/new")
    hits = dict.fromkeys(K_VALUES, 0)
    misses: list[str] = []
    for fact in facts:
        await say(fact.question)
        lines = memory_lines(llm.requests[-1].messages[0].content or "")
        for k in K_VALUES:
            hits[k] += any(fact.expected in line for line in lines[:k])
        if not any(fact.expected in line for line in lines[:6]):
            misses.append(fact.question)
    await app.aclose()
    return RecallReport(len(facts), hits, misses)


class SilentChannel:
    """A channel that drops replies: the benchmarks read the prompts, not the answers."""

    name = "eval"

    async def send(self, address: ChatAddress, text: str) -> None:
        return None

    def open_stream(self, address: ChatAddress) -> None:
        return None


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        report = asyncio.run(evaluate(Path(tmp)))
    name = "memory recall"
    figures = [
        Figure(name, f"planted facts recalled @{k} in # Memory", report.recall_at(k), "", "")
        for k in K_VALUES
    ]
    at_6 = report.recall_at(6)
    figures[-1] = Figure(
        name, "planted facts recalled @6 in # Memory", at_6, "", f">= {TARGET_AT_6}", at_6 >= 0.9
    )
    for question in report.misses_at_6:
        print(f"missed @6: {question}")
    return figures


def main() -> None:
    print_table(run())


if __name__ == "__main__":
    main()
