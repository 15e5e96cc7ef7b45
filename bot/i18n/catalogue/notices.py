"""What a turn says instead of (or besides) the model's answer: apologies, limits reached,
budgets, the language model failing, and the status lines of services."""

from __future__ import annotations

from bot.i18n.phrase import Say, decimal_ru, number_ru, phrase, plural_en, plural_ru


@phrase
def no_answer() -> Say:
    return Say(
        en="Sorry, something went wrong on my side and I have no answer for this message. "
        "Please try again.",
        ru="Извините, у меня что-то пошло не так, и ответа на это сообщение нет. "
        "Пожалуйста, попробуйте ещё раз.",
    )


@phrase
def interrupted() -> Say:
    return Say(
        en="I was stopped (the bot is shutting down) before I could finish answering this. "
        "If I haven't answered it once I'm back, please send it again.",
        ru="Меня остановили (бот выключается), и я не успел ответить на это. "
        "Если после возвращения я так и не отвечу, пожалуйста, отправьте сообщение ещё раз.",
    )


@phrase
def stopped_note() -> Say:
    return Say(en="⏹ Stopped.", ru="⏹ Остановлено.")


@phrase
def turn_deadline(seconds: float) -> Say:
    return Say(
        en=f"I couldn't finish within {seconds:g} seconds, so I stopped. "
        "Please try again, or ask for less at once.",
        ru=f"Я не уложился в {decimal_ru(seconds)} с и остановился. "
        "Пожалуйста, попробуйте ещё раз или попросите меньше за один раз.",
    )


@phrase
def too_many_tool_calls(limit: int) -> Say:
    return Say(
        en=f"I stopped after {plural_en(limit, 'tool call', 'tool calls')} without reaching an "
        "answer. Please try again, or ask for less at once.",
        ru=f"Я остановился после {plural_ru(limit, 'вызова', 'вызовов', 'вызовов')} "
        "инструментов, так и не получив ответа. Пожалуйста, попробуйте ещё раз или попросите "
        "меньше за один раз.",
    )


@phrase
def too_many_model_calls(limit: int) -> Say:
    return Say(
        en=f"I stopped after {plural_en(limit, 'model call', 'model calls')} without reaching an "
        "answer. Please try again, or ask for less at once.",
        ru=f"Я остановился после {plural_ru(limit, 'обращения', 'обращений', 'обращений')} к "
        "модели, так и не получив ответа. Пожалуйста, попробуйте ещё раз или попросите "
        "меньше за один раз.",
    )


@phrase
def answer_cut(limit: int) -> Say:
    return Say(
        en=f"[The answer was cut here: it passed the limit of {limit:,} characters "
        "(llm.maxOutputChars).]",
        ru=f"[Ответ обрезан здесь: он превысил предел в {number_ru(limit)} символов "
        "(llm.maxOutputChars).]",
    )


@phrase
def token_budget_reached(budget: int) -> Say:
    return Say(
        en=f"You have used today's budget of {budget:,} tokens, so I can't answer until "
        "midnight UTC. /usage shows what you used.",
        ru=f"Вы израсходовали дневной бюджет в {number_ru(budget)} токенов, поэтому до полуночи "
        "UTC я не могу отвечать. /usage показывает расход.",
    )


@phrase
def cost_budget_reached(budget: str, currency: str) -> Say:
    return Say(
        en=f"You have used today's budget of {budget} {currency}, so I can't answer until "
        "midnight UTC. /usage shows what you used.",
        ru=f"Вы израсходовали дневной бюджет в {budget} {currency}, поэтому до полуночи UTC "
        "я не могу отвечать. /usage показывает расход.",
    )


# The language model failing (`bot/adapters/openai_llm.py`).


@phrase
def llm_tries(attempts: int) -> Say:
    return Say(
        en=f"after {plural_en(attempts, 'attempt', 'attempts')}",
        ru=f"после {plural_ru(attempts, 'попытки', 'попыток', 'попыток')}",
    )


@phrase
def llm_credentials(status: int) -> Say:
    return Say(
        en=f"The language model refused our credentials (HTTP {status}). "
        "The bot's operator needs to check OPENAI_API_KEY.",
        ru=f"Языковая модель отклонила наши учётные данные (HTTP {status}). "
        "Оператору бота нужно проверить OPENAI_API_KEY.",
    )


@phrase
def llm_rate_limited(tries: str) -> Say:
    return Say(
        en=f"The language model is rate-limiting me (HTTP 429) and did not recover {tries}. "
        "Please try again in a minute.",
        ru=f"Языковая модель ограничивает частоту запросов (HTTP 429) и не отпустила {tries}. "
        "Пожалуйста, попробуйте через минуту.",
    )


@phrase
def llm_server_failing(status: int, tries: str) -> Say:
    return Say(
        en=f"The language model service is failing (HTTP {status}) {tries}. "
        "Please try again in a few minutes.",
        ru=f"Сервис языковой модели сбоит (HTTP {status}) {tries}. "
        "Пожалуйста, попробуйте через несколько минут.",
    )


@phrase
def llm_refused(status: int) -> Say:
    return Say(
        en=f"The language model refused this request (HTTP {status}).",
        ru=f"Языковая модель отклонила этот запрос (HTTP {status}).",
    )


@phrase
def llm_unreachable(tries: str) -> Say:
    return Say(
        en=f"I can't reach the language model server ({tries}). Please try again later.",
        ru=f"Не могу связаться с сервером языковой модели ({tries}). Пожалуйста, попробуйте позже.",
    )


@phrase
def llm_unreadable() -> Say:
    return Say(
        en="The language model sent an answer I could not read. Please try again.",
        ru="Языковая модель прислала ответ, который я не смог прочитать. "
        "Пожалуйста, попробуйте ещё раз.",
    )


@phrase
def llm_model_not_found(model: str) -> Say:
    return Say(
        en=f"The language model '{model}' was not found (HTTP 404). The bot's operator "
        "needs to check llm.model and OPENAI_BASE_URL.",
        ru=f"Языковая модель '{model}' не найдена (HTTP 404). Оператору бота нужно проверить "
        "llm.model и OPENAI_BASE_URL.",
    )


@phrase
def llm_timed_out(seconds: float, tries: str) -> Say:
    return Say(
        en=f"The language model did not answer within {seconds:g} seconds ({tries}). "
        "Please try again.",
        ru=f"Языковая модель не ответила за {decimal_ru(seconds)} с ({tries}). "
        "Пожалуйста, попробуйте ещё раз.",
    )


@phrase
def llm_empty() -> Say:
    return Say(
        en="The language model sent an empty response. Please try again.",
        ru="Языковая модель прислала пустой ответ. Пожалуйста, попробуйте ещё раз.",
    )


@phrase
def llm_context_overflow() -> Say:
    return Say(
        en="This conversation no longer fits the language model's context window, even with "
        "its older part summarised where it could be. Send /new to start a fresh "
        "conversation (what I remember about you stays), or send a shorter message.",
        ru="Этот разговор больше не помещается в контекстное окно языковой модели, даже со "
        "сжатой, где это возможно, старой частью. Отправьте /new, чтобы начать новый разговор "
        "(то, что я помню о вас, сохранится), или пришлите сообщение покороче.",
    )


@phrase
def llm_token_limit_cut() -> Say:
    return Say(
        en="[The answer stopped here: it reached the model's output token limit "
        "(llm.maxOutputTokens). Ask me to go on.]",
        ru="[Ответ оборвался здесь: он достиг предела токенов модели "
        "(llm.maxOutputTokens). Попросите меня продолжить.]",
    )


# Services in `/status`.


@phrase
def rag_state(healthy: bool) -> Say:
    return Say(
        en="healthy" if healthy else "not available",
        ru="в порядке" if healthy else "недоступен",
    )


@phrase
def rag_line(state: str, style: str, mode: str) -> Say:
    return Say(
        en=f"LightRAG: {state} ({style} style, {mode} mode)",
        ru=f"LightRAG: {state} (стиль {style}, режим {mode})",
    )


@phrase
def rag_documents(group: bool, count: int) -> Say:
    whose = "This group's" if group else "Your"
    return Say(
        en=f"{whose} long-term documents: {count:,}",
        ru=f"Документы в долгосрочной памяти {'этой группы' if group else 'у вас'}: "
        f"{number_ru(count)}",
    )


@phrase
def index_queue(waiting: int, set_aside: int) -> Say:
    return Say(
        en=f"Index queue: {waiting:,} waiting"
        + (f", {set_aside:,} set aside" if set_aside else ""),
        ru=f"Очередь индексации: ждут {number_ru(waiting)}"
        + (f", отложено {number_ru(set_aside)}" if set_aside else ""),
    )


BACKLOG_NAMES_RU = {
    "document(s) for the index queue": "документ(ы) для очереди индексации",
    "unsaved session(s)": "несохранённые сессии",
}
"""Russian names of what waits in memory while the disk refuses it (`Backlog.unwritten_label`,
English, is also what the log says); a new backlog adds its name here."""


@phrase
def backlog_name(label: str) -> Say:
    return Say(en=label, ru=BACKLOG_NAMES_RU.get(label, label))


@phrase
def disk_trouble(full: bool, reason: str, waiting: str) -> Say:
    kept_en = f"; kept in memory and retried: {waiting}" if waiting else ""
    kept_ru = f"; в памяти и будет записано снова: {waiting}" if waiting else ""
    return Say(
        en=f"⚠ Disk {'full' if full else 'not writable'} ({reason}): recent changes may not be "
        f"saved{kept_en}",
        ru=f"⚠ Диск {'заполнен' if full else 'недоступен для записи'} ({reason}): последние "
        f"изменения могут быть не сохранены{kept_ru}",
    )
