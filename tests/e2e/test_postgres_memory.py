"""Short-term memory with `DATABASE_URL`: a fact told before `/new` is recalled after it and
after a restart, from PostgreSQL (nothing in files); another user never sees it; a database
lost mid-run costs the turn its `# Memory`, not its answer, and what it said is kept."""

import pytest

from bench.memory_recall import memory_lines
from tests.e2e.conftest import ALICE, BOB, say
from tests.e2e.test_postgres_state import running_app
from tests.fakes.channel import RecordingChannel
from tests.fakes.openai_server import Reply

pytestmark = pytest.mark.postgres

FACT = "Remember that my staging server is at 10.0.0.5."
FACT_LINE = "The user's staging server is at 10.0.0.5."
QUESTION = "What's the IP of my staging server?"


def memory_of_last_prompt(fake_llm) -> list[str]:
    return memory_lines(fake_llm.system_prompts()[-1])


def recalled(fake_llm) -> bool:
    """The fact is in the last prompt's `# Memory`. Not necessarily first: after a restart the
    question asked before is an episode too, and with two items the word weights are too
    even for the word ranking to order them."""
    return any(FACT_LINE in line for line in memory_of_last_prompt(fake_llm))


async def test_a_fact_is_recalled_after_new_and_a_restart_and_never_by_another_user(
    settings, fake_llm, database_url
):
    channel = RecordingChannel()
    async with running_app(settings, fake_llm, database_url) as app:
        fake_llm.script(Reply(text="Noted: your staging server is at 10.0.0.5."))
        await app.handle(say(ALICE, FACT), channel)
        await app.handle(say(ALICE, "/new"), channel)
        await app.handle(say(ALICE, QUESTION), channel)
        assert recalled(fake_llm)
        await app.memory.drain()
    assert not list((settings.data_dir / "memory").glob("u-*")), "in the database, not in files"

    async with running_app(settings, fake_llm, database_url) as restarted:
        await restarted.handle(say(ALICE, QUESTION), channel)
        assert recalled(fake_llm)
        await restarted.handle(say(BOB, QUESTION), channel)
        assert memory_of_last_prompt(fake_llm) == []
        assert "10.0.0.5" not in str(fake_llm.requests[-1])
        await restarted.handle(say(ALICE, "/memory"), channel)
        assert "10.0.0.5" in channel.texts()[-1]


async def test_a_turn_while_the_database_is_away_is_answered_and_its_fact_kept(
    settings, fake_llm, own_postgres
):
    url = own_postgres.create_database()
    channel = RecordingChannel()
    async with running_app(settings, fake_llm, url) as app:
        own_postgres.pause()
        await app.handle(say(ALICE, FACT), channel)
        assert channel.texts()[-1] == f"echo: {FACT}", "answered without the database"
        await app.memory.drain()
        assert app.memory.unwritten() == 2  # the fact and the exchange, waiting

        own_postgres.resume()
        await app.disk.retry()  # what the 30 s retries do
        assert app.memory.unwritten() == 0
        await app.handle(say(ALICE, "/new"), channel)
        await app.handle(say(ALICE, QUESTION), channel)
        assert recalled(fake_llm)
