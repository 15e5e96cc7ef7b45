"""The app against a local OpenAI-compatible server and the emulated Bot API, and two users
to talk to it."""

import pytest

from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from tests.fakes.openai_server import FakeOpenAiServer
from tests.fakes.telegram_server import FakeTelegramServer

ALICE = ChatAddress("test", "alice")
BOB = ChatAddress("test", "bob")


@pytest.fixture
def telegram():
    """The emulated Bot API (`tests/fakes/telegram_server.py`)."""
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture
def fake_llm():
    with FakeOpenAiServer() as server:
        yield server


@pytest.fixture
async def app(settings, fake_llm):
    settings.openai_base_url = fake_llm.base_url
    built = BotApp.build(settings)
    yield built
    await built.aclose()


def say(address, text, operator=False):
    """A message from the user who owns `address` (user id `user-<chat id>`); `operator`: the
    channel vouches that this user runs the bot."""
    return IncomingMessage(address, f"user-{address.chat_id}", text, operator=operator)
