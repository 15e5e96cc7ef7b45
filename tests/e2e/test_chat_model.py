"""`/model`: a model per chat from the allow-list `llm.models`; `llm.model` stays the default."""

import pytest

from bot.app import BotApp
from tests.conftest import edit_runtime_config
from tests.e2e.conftest import ALICE, BOB, say
from tests.fakes.channel import RecordingChannel

pytestmark = pytest.mark.e2e


async def test_a_chat_chooses_its_model_and_keeps_it_across_a_restart(app, settings, fake_llm):
    edit_runtime_config(
        settings.runtime_config_path, llm={"model": "small", "models": ["small", "large"]}
    )
    channel = RecordingChannel()
    await app.handle(say(ALICE, "/model"), channel)
    assert channel.texts()[-1].startswith("Models (→ this chat's):\n→ small\n  large")
    await app.handle(say(ALICE, "/model huge"), channel)
    assert "not one of the models" in channel.texts()[-1]
    await app.handle(say(ALICE, "/model large"), channel)
    assert channel.texts()[-1] == "This chat now uses large."

    await app.handle(say(ALICE, "hello"), channel)
    await app.handle(say(BOB, "hello"), channel)
    assert [body["model"] for body in fake_llm.requests] == ["large", "small"]
    await app.handle(say(ALICE, "/status"), channel)
    assert "Model: large (chosen for this chat with /model)" in channel.texts()[-1]

    restarted = BotApp.build(settings)
    try:
        await restarted.handle(say(ALICE, "again"), channel)
        assert fake_llm.requests[-1]["model"] == "large", "the choice is kept on disk"
        edit_runtime_config(settings.runtime_config_path, llm={"models": ["small"]})
        await restarted.handle(say(ALICE, "and now"), channel)
        assert fake_llm.requests[-1]["model"] == "small", "off the list: the default again"
        await restarted.handle(say(ALICE, "/model default"), channel)
        assert channel.texts()[-1] == "This chat uses the default model again: small."
    finally:
        await restarted.aclose()
    assert (settings.data_dir / "chat-models.json").stat().st_mode & 0o777 == 0o600
