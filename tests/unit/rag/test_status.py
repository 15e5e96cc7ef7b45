from bot.config import RuntimeConfig
from bot.rag.status import shared_memory_warning


def config(style, users, enabled=True):
    return RuntimeConfig.model_validate(
        {"rag": {"enabled": enabled, "retrievalStyle": style}, "telegram": {"allowedUsers": users}}
    )


def test_answer_style_with_several_users_warns_that_memory_is_shared():
    warning = shared_memory_warning(config("answer", [1, 2]))
    assert warning and "shared between users" in warning and "'context'" in warning


def test_no_warning_when_memory_cannot_mix():
    assert shared_memory_warning(config("answer", [1])) is None
    assert shared_memory_warning(config("context", [1, 2, 3])) is None
    assert shared_memory_warning(config("answer", [1, 2], enabled=False)) is None
