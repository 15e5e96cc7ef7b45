"""`/voice` choices: per chat, kept in a private file across restarts."""

import stat

from bot.adapters.telegram.voice_replies import VoiceSwitch
from bot.conversation import ChatAddress

HERE = ChatAddress("telegram", "1")
THERE = ChatAddress("telegram", "-100", "7")


async def test_choices_are_per_chat_and_survive_a_restart(tmp_path):
    path = tmp_path / "telegram" / "voice-replies.json"
    switch = VoiceSwitch(path)
    assert switch.choice(HERE) is None
    assert await switch.choose(HERE, True) and await switch.choose(THERE, False)
    again = VoiceSwitch(path)
    assert (again.choice(HERE), again.choice(THERE)) == (True, False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert await again.choose(HERE, None)
    assert VoiceSwitch(path).choice(HERE) is None


def test_a_damaged_file_starts_afresh(tmp_path):
    path = tmp_path / "voice-replies.json"
    path.write_text("{not json")
    assert VoiceSwitch(path).choice(HERE) is None
