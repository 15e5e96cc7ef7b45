"""`BotApp.build`, the one composition root: every adapter can be handed in, and the app then
runs on what it was given; what it makes itself it also closes; a channel's own commands and
stores are wired there, not by the channel."""

from datetime import UTC, datetime

from bot.adapters.lightrag import LightRagAdapter
from bot.adapters.openai_llm import OpenAiLlm
from bot.adapters.telegram import TelegramBot, TelegramOptions, UpdateInbox, WebhookOptions
from bot.app import BotApp
from bot.conversation import ChatAddress, IncomingMessage
from bot.storage.disk import DiskHealth
from bot.stores import file_stores
from tests.conftest import edit_runtime_config
from tests.fakes.channel import RecordingChannel
from tests.fakes.embeddings import FakeEmbedder
from tests.fakes.llm import ScriptedLlm, text
from tests.fakes.rag import FakeRag
from tests.fakes.waiting import wait_until

ALICE = ChatAddress("test", "alice")
REMEMBERED = "The deploy of March went out with docker compose on the staging host."


class OwnedRag(FakeRag):
    """The shared in-memory LightRAG, which also notes whether someone closed it."""

    def __init__(self, context: str) -> None:
        super().__init__(context)
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


class MuteSpeech:
    """A `SpeechPort` that hears nothing and says nothing (no turn here carries audio)."""

    async def transcribe(self, clip, config) -> str:
        return ""

    async def synthesize(self, text, config) -> bytes:
        return b""


def message(words: str) -> IncomingMessage:
    return IncomingMessage(ALICE, "user-alice", words)


async def test_a_turn_runs_on_the_adapters_handed_in_and_on_nothing_else(settings):
    # The settings name an LLM on a closed port: a turn that reached it would fail.
    edit_runtime_config(settings.runtime_config_path, rag={"enabled": True})
    llm = ScriptedLlm(text("Noted: staging is at 10.0.0.5."), text("It is 10.0.0.5."))
    embedder, rag, disk = FakeEmbedder(), OwnedRag(REMEMBERED), DiskHealth()
    speech = MuteSpeech()
    app = BotApp.build(settings, llm=llm, embedder=embedder, rag=rag, disk=disk, speech=speech)
    channel = RecordingChannel()
    await app.start()
    try:
        await app.handle(message("Remember that my staging server is at 10.0.0.5."), channel)
        await wait_until(lambda: bool(rag.received), 10, "the exchange reached the RAG")
        await app.handle(message("What's the IP of my staging server, the one we set up?"), channel)
        await app.memory.drain()
    finally:
        await app.aclose()

    assert channel.texts() == ["Noted: staging is at 10.0.0.5.", "It is 10.0.0.5."]
    assert len(llm.requests) == 2
    prompt = llm.requests[-1].messages[0].content or ""
    assert REMEMBERED in prompt, "the RAG handed in gave the prompt its long-term memory"
    assert rag.asked[-1][0].startswith("What's the IP of my staging server")
    assert "10.0.0.5" in rag.received[0].text, "the exchange was indexed through the RAG handed in"
    assert any("staging server" in words for words in embedder.embedded)
    assert app.llm is llm and app.rag is rag and app.embedder is embedder
    assert app.disk is disk and app.speech is speech
    assert not rag.closed, "what the caller handed in is the caller's to close"


async def test_what_the_app_makes_itself_it_closes(settings):
    app = BotApp.build(settings)
    assert isinstance(app.llm, OpenAiLlm)
    assert isinstance(app.rag, LightRagAdapter)
    client = app.rag._client
    await app.start()
    await app.aclose()
    assert client.is_closed


async def test_the_app_keeps_everything_in_the_stores_handed_in(settings, tmp_path):
    stores = file_stores(tmp_path / "elsewhere", DiskHealth())
    built = BotApp.build(
        settings,
        llm=ScriptedLlm(text("Hello, Alice.")),
        embedder=FakeEmbedder(),
        rag=FakeRag(""),
        speech=MuteSpeech(),
        stores=stores,
    )
    async with built as app:
        await app.handle(message("Hello there, I am Alice."), RecordingChannel())

    assert app.sessions is stores.sessions and app.stores is stores
    saved = await stores.sessions.load(ALICE.session_key)
    assert [m.content for m in saved.messages] == ["Hello there, I am Alice.", "Hello, Alice."]
    assert (tmp_path / "elsewhere" / "sessions").is_dir()
    assert not (settings.data_dir / "sessions").exists(), "nothing in the settings' data dir"


def telegram_options(settings, **options) -> TelegramOptions:
    inbox = settings.data_dir / "telegram" / "inbox.jsonl"
    return TelegramOptions("42:token", inbox, api_url="http://127.0.0.1:9", **options)


async def test_only_a_bot_built_for_telegram_has_start_and_keeps_the_inbox(settings):
    terminal = BotApp.build(settings, llm=ScriptedLlm())
    assert terminal.telegram is None
    assert terminal.commands.get("start") is None and terminal.commands.get("voice") is None
    assert not any(isinstance(store, UpdateInbox) for store in terminal.memory_stores)
    await terminal.aclose()

    telegram = BotApp.build(settings, llm=ScriptedLlm(), telegram=telegram_options(settings))
    assert isinstance(telegram.telegram, TelegramBot)
    assert telegram.commands.get("start") is not None
    assert {"start", "voice"} <= {command.name for command in telegram.commands.menu()}
    (inbox,) = [store for store in telegram.memory_stores if isinstance(store, UpdateInbox)]
    assert telegram.telegram.inbox is inbox, "/forget all empties the inbox the bot writes"
    await telegram.aclose()


async def test_telegram_receives_through_the_inbox_in_both_modes_never_ptbs_updater(settings):
    polling = BotApp.build(settings, llm=ScriptedLlm(), telegram=telegram_options(settings))
    assert polling.telegram is not None
    assert polling.telegram.poller is not None and polling.telegram.webhook is None
    assert polling.telegram.application.updater is None
    await polling.aclose()

    webhook = WebhookOptions("https://bot.example.org/hook", port=0, secret="s3c")
    hooked = BotApp.build(
        settings, llm=ScriptedLlm(), telegram=telegram_options(settings, webhook=webhook)
    )
    assert hooked.telegram is not None
    assert hooked.telegram.webhook is not None and hooked.telegram.poller is None
    assert hooked.telegram.application.updater is None
    await hooked.aclose()


async def test_memory_dates_what_it_stores_by_the_apps_clock(settings):
    moved = datetime(2024, 5, 17, 9, 30, tzinfo=UTC)
    llm = ScriptedLlm(text("Lovely, enjoy Porto."))
    app = BotApp.build(settings, llm=llm, embedder=FakeEmbedder(), clock=lambda: moved)
    try:
        await app.handle(message("Remember that my sister lives in Porto."), RecordingChannel())
        await app.memory.drain()
        stored = await app.memory.live_items("user-alice")
    finally:
        await app.aclose()

    assert stored, "the exchange was remembered"
    assert {item.created_at for item in stored} == {moved}
