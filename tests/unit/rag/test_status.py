from bot.config import RuntimeConfig, RuntimeConfigStore
from bot.conversation.scope import MemoryScope
from bot.rag.queue import IndexQueue
from bot.rag.status import RagStatus
from bot.rag.style import answer_style_refusal, effective_style
from tests.fakes.memory import FakeDocuments
from tests.fakes.rag import FakeRag


def config(style, users, enabled=True):
    return RuntimeConfig.model_validate(
        {"rag": {"enabled": enabled, "retrievalStyle": style}, "telegram": {"allowedUsers": users}}
    )


def test_answer_style_is_refused_while_several_people_can_talk_to_the_bot():
    refusal = answer_style_refusal(config("answer", [1, 2]), owners=1)
    assert refusal == "2 users are allowed in telegram.allowedUsers"
    assert effective_style(config("answer", [1, 2]), owners=1) == "context"


def test_answer_style_is_refused_while_the_server_holds_several_users_documents():
    assert answer_style_refusal(config("answer", [1]), owners=3) is not None
    assert effective_style(config("answer", [1]), owners=3) == "context"


def test_answer_style_stays_for_one_user_alone():
    assert answer_style_refusal(config("answer", [1]), owners=1) is None
    assert effective_style(config("answer", [1]), owners=1) == "answer"
    assert answer_style_refusal(config("context", [1, 2, 3]), owners=9) is None


async def test_a_group_is_always_in_context_style(tmp_path):
    assert effective_style(config("answer", [1]), owners=1, in_group=True) == "context"
    path = tmp_path / "runtime-config.json"
    path.write_text(config("answer", [1]).model_dump_json(by_alias=True))
    status = RagStatus(RuntimeConfigStore(path), FakeRag(), IndexQueue(tmp_path / "q"),
                       FakeDocuments())  # fmt: skip
    [line, *_] = await status.status_lines(MemoryScope("group:t:-1", "1"))
    assert line == "LightRAG: healthy (context style, hybrid mode)"
    [line, *_] = await status.status_lines(MemoryScope("1", "1"))
    assert line == "LightRAG: healthy (answer style, hybrid mode)"


async def test_status_says_answer_style_is_refused_and_which_style_is_used(tmp_path):
    path = tmp_path / "runtime-config.json"
    path.write_text(config("answer", [1, 2]).model_dump_json(by_alias=True))
    status = RagStatus(RuntimeConfigStore(path), FakeRag(), IndexQueue(tmp_path / "q"),
                       FakeDocuments())  # fmt: skip
    lines = await status.status_lines(MemoryScope("1", "1"))
    assert lines[0] == "LightRAG: healthy (context style, hybrid mode)"
    assert any("'answer' is refused while 2 users are allowed" in line for line in lines)
