"""Commands every channel has: their menu descriptions, `/help`, `/new`, `/stop`, `/compact`,
`/status`, `/model`, `/usage`, `/language`, and Telegram's `/start` and `/voice`."""

from __future__ import annotations

from typing import Literal

from bot.i18n.phrase import Say, number_ru, phrase, plural_en, plural_ru

# The menu (Telegram's command list, and `/help`).


@phrase
def about_new() -> Say:
    return Say(en="start a fresh conversation", ru="начать разговор заново")


@phrase
def about_stop() -> Say:
    return Say(en="stop the answer I am writing", ru="остановить ответ, который я пишу")


@phrase
def about_compact() -> Say:
    return Say(en="summarise our conversation so far", ru="сжать наш разговор в краткое изложение")


@phrase
def about_status() -> Say:
    return Say(en="model, session and memory status", ru="модель, сессия и состояние памяти")


@phrase
def about_help() -> Say:
    return Say(en="list the commands", ru="список команд")


@phrase
def about_memory() -> Say:
    return Say(
        en="what I remember about you; /memory <words>: what I recall about them",
        ru="что я о вас помню; /memory <слова>: что я о них вспомню",
    )


@phrase
def about_forget() -> Say:
    return Say(en="forget one item, or everything", ru="забыть одну запись или всё")


@phrase
def about_remember() -> Say:
    return Say(en="turn remembering off or on", ru="выключить или включить запоминание")


@phrase
def about_model() -> Say:
    return Say(en="choose the model for this chat", ru="выбрать модель для этого чата")


@phrase
def about_usage() -> Say:
    return Say(en="tokens used today and their cost", ru="токены за сегодня и их стоимость")


@phrase
def about_language() -> Say:
    return Say(en="my language: en, ru or auto", ru="мой язык: en, ru или auto")


@phrase
def about_start() -> Say:
    return Say(en="what I do and what I remember", ru="что я умею и что запоминаю")


@phrase
def about_voice() -> Say:
    return Say(en="spoken answers: on, off or auto", ru="ответы голосом: on, off или auto")


@phrase
def help_text(listing: str) -> Say:
    return Say(
        en=f"Commands:\n{listing}\n\nAnything else you write is a message to me.",
        ru=f"Команды:\n{listing}\n\nВсё остальное, что вы пишете, — сообщение мне.",
    )


@phrase
def unknown_command(name: str) -> Say:
    return Say(
        en=f"Unknown command /{name}. Send /help to see what I can do.",
        ru=f"Неизвестная команда /{name}. Отправьте /help, чтобы увидеть, что я умею.",
    )


@phrase
def command_failed(name: str) -> Say:
    return Say(
        en=f"Sorry, /{name} failed this time. Please try again in a minute.",
        ru=f"Простите, /{name} сейчас не получилась. Попробуйте ещё раз через минуту.",
    )


# Commands answered in private when asked in a group (`bot/commands/private_answers.py`).


@phrase
def answered_in_private(name: str) -> Say:
    return Say(
        en=f"I've sent you the answer to /{name} in private.",
        ru=f"Ответ на /{name} я прислал вам в личные сообщения.",
    )


@phrase
def asked_in_a_group(name: str) -> Say:
    return Say(
        en=f"You asked /{name} in a group; the answer is for you alone, so it is here:",
        ru=f"Вы спросили /{name} в группе; ответ только для вас, поэтому он здесь:",
    )


@phrase
def start_a_private_chat_first(name: str) -> Say:
    return Say(
        en=f"I answer /{name} only in private, and Telegram lets me write to you only once "
        f"you have started a chat with me: open a private chat with me, press Start, then "
        f"send /{name} here again.",
        ru=f"На /{name} я отвечаю только в личных сообщениях, а Telegram позволяет мне "
        f"написать вам, только когда вы сами начали со мной чат: откройте личный чат со мной, "
        f"нажмите «Старт» и отправьте /{name} здесь ещё раз.",
    )


@phrase
def private_answer_failed(name: str) -> Say:
    return Say(
        en=f"I could not send you the answer to /{name} in private just now. "
        "Please try again in a moment.",
        ru=f"Сейчас не получилось прислать вам ответ на /{name} в личные сообщения. "
        "Пожалуйста, попробуйте чуть позже.",
    )


@phrase
def ask_in_private(name: str) -> Say:
    return Say(
        en=f"I answer /{name} only in a private chat with me: please ask me there.",
        ru=f"На /{name} я отвечаю только в личном чате со мной: пожалуйста, спросите там.",
    )


# `/new`, `/stop`, `/compact`.


@phrase
def fresh_conversation() -> Say:
    return Say(
        en="Started a fresh conversation. What we said before is set aside; "
        "what I remember long-term stays.",
        ru="Начали разговор заново. Прежний разговор отложен; то, что я помню надолго, остаётся.",
    )


@phrase
def nothing_to_stop() -> Say:
    return Say(
        en="There is nothing to stop: I'm not writing an answer in this chat.",
        ru="Останавливать нечего: я сейчас не пишу ответ в этом чате.",
    )


@phrase
def only_who_asked_may_stop() -> Say:
    return Say(
        en="Only whoever asked for this answer (or an operator) can stop it.",
        ru="Остановить этот ответ может только тот, кто его попросил (или оператор).",
    )


@phrase
def stopped() -> Say:
    return Say(
        en="Stopped. What I had written so far stays in our conversation; "
        "messages you sent before /stop are answered next.",
        ru="Остановлено. Написанное до этого остаётся в разговоре; "
        "на сообщения, отправленные до /stop, я отвечу следом.",
    )


@phrase
def compact_failed(reason: str) -> Say:
    return Say(
        en=f"I couldn't summarise our conversation just now ({reason}); nothing was lost.",
        ru=f"Сейчас не получилось сжать разговор ({reason}); ничего не потеряно.",
    )


@phrase
def nothing_to_compact() -> Say:
    return Say(
        en="There is nothing to compact yet: our conversation is one exchange or less.",
        ru="Сжимать пока нечего: в разговоре не больше одного обмена репликами.",
    )


@phrase
def compacted(folded: int, summary_chars: int) -> Say:
    return Say(
        en=f"Compacted: {plural_en(folded, 'older message is', 'older messages are')} now a "
        f"summary of {plural_en(summary_chars, 'character', 'characters')}; our last exchange "
        "stays word for word.",
        ru=f"Сжато: старых сообщений — {number_ru(folded)}; теперь это краткое изложение на "
        f"{plural_ru(summary_chars, 'символ', 'символа', 'символов')}; "
        "последний обмен репликами остался дословно.",
    )


# `/status`.


@phrase
def on_off(on: bool) -> Say:
    return Say(en="on" if on else "off", ru="вкл." if on else "выкл.")


@phrase
def status_session(turns: int, messages: int, since: str) -> Say:
    return Say(
        en=f"This chat: {plural_en(turns, 'turn', 'turns')} "
        f"({plural_en(messages, 'message', 'messages')}) since {since}",
        ru=f"Этот чат: {plural_ru(turns, 'ход', 'хода', 'ходов')} "
        f"({plural_ru(messages, 'сообщение', 'сообщения', 'сообщений')}) с {since}",
    )


@phrase
def status_summarised(summary_chars: int) -> Say:
    return Say(
        en=f", older ones summarised ({plural_en(summary_chars, 'character', 'characters')})",
        ru=f", более ранние сжаты ({plural_ru(summary_chars, 'символ', 'символа', 'символов')})",
    )


@phrase
def status_model(model: str) -> Say:
    return Say(en=f"Model: {model}", ru=f"Модель: {model}")


@phrase
def status_model_chosen(model: str) -> Say:
    return Say(
        en=f"{model} (chosen for this chat with /model)",
        ru=f"{model} (выбрана для этого чата через /model)",
    )


@phrase
def status_model_at(model: str, endpoint: str) -> Say:
    return Say(en=f"{model} at {endpoint}", ru=f"{model} на {endpoint}")


@phrase
def status_switches(
    tools: str, memory: str, rag: str, streaming: str, vision: str, language: str
) -> Say:
    return Say(
        en=f"Tools: {tools}\nShort-term memory: {memory}\nLong-term memory (LightRAG): {rag}\n"
        f"Streaming replies (Telegram): {streaming}\nLooking at photos (llm.vision): {vision}\n"
        f"Language: {language}",
        ru=f"Инструменты: {tools}\nКраткосрочная память: {memory}\n"
        f"Долгосрочная память (LightRAG): {rag}\nПотоковые ответы (Telegram): {streaming}\n"
        f"Просмотр фото (llm.vision): {vision}\nЯзык: {language}",
    )


@phrase
def none_listed() -> Say:
    return Say(en="none", ru="нет")


@phrase
def config_valid(path: str) -> Say:
    return Say(
        en=f"Runtime config: {path} (valid)" if path else "Runtime config: valid",
        ru=f"Рабочая конфигурация: {path} (в порядке)"
        if path
        else "Рабочая конфигурация: в порядке",
    )


@phrase
def config_rejected() -> Say:
    return Say(
        en="⚠ Runtime config: the last edit was rejected; the previous valid one is in force.",
        ru="⚠ Рабочая конфигурация: последняя правка отклонена; действует прежняя рабочая.",
    )


@phrase
def config_rejected_for_operator(path: str, error: str) -> Say:
    return Say(
        en=f"⚠ Runtime config: the last edit of {path} was rejected ({error}); "
        "the previous valid config is in force.",
        ru=f"⚠ Рабочая конфигурация: последняя правка {path} отклонена ({error}); "
        "действует прежняя рабочая конфигурация.",
    )


# `/model`.


@phrase
def model_only_one(current: str) -> Say:
    return Say(
        en=f"This chat uses {current}; the operator has listed no other models.",
        ru=f"Этот чат использует {current}; других моделей оператор не указал.",
    )


@phrase
def model_listing(listing: str) -> Say:
    return Say(
        en=f"Models (→ this chat's):\n{listing}\n\n/model <name> chooses one.",
        ru=f"Модели (→ модель этого чата):\n{listing}\n\n/model <название> выбирает модель.",
    )


@phrase
def model_not_recorded(current: str) -> Say:
    return Say(
        en=f"I couldn't record that just now; this chat still uses {current}.",
        ru=f"Сейчас не получилось это сохранить; чат по-прежнему использует {current}.",
    )


@phrase
def model_default_again(model: str) -> Say:
    return Say(
        en=f"This chat uses the default model again: {model}.",
        ru=f"Этот чат снова использует модель по умолчанию: {model}.",
    )


@phrase
def model_not_allowed(model: str) -> Say:
    return Say(
        en=f"{model} is not one of the models I may use. Send /model to see them.",
        ru=f"{model} нет среди моделей, которые мне разрешены. Отправьте /model, чтобы их увидеть.",
    )


@phrase
def model_chosen(model: str) -> Say:
    return Say(en=f"This chat now uses {model}.", ru=f"Теперь этот чат использует {model}.")


# `/usage`.


@phrase
def usage_cut_answers(count: int) -> Say:
    return Say(
        en=f"{plural_en(count, 'answer', 'answers')} stopped at the model's output token limit "
        "(llm.maxOutputTokens)",
        ru=f"{plural_ru(count, 'ответ оборвался', 'ответа оборвались', 'ответов оборвались')} "
        "на пределе токенов модели (llm.maxOutputTokens)",
    )


@phrase
def usage_amount(tokens: int, prompt_tokens: int, completion_tokens: int, calls: int) -> Say:
    return Say(
        en=f"{plural_en(tokens, 'token', 'tokens')} ({prompt_tokens:,} in, "
        f"{completion_tokens:,} out) in {plural_en(calls, 'call', 'calls')}",
        ru=f"{plural_ru(tokens, 'токен', 'токена', 'токенов')} ({number_ru(prompt_tokens)} на "
        f"входе, {number_ru(completion_tokens)} на выходе) за "
        f"{plural_ru(calls, 'вызов', 'вызова', 'вызовов')}",
    )


@phrase
def usage_cost(cost: str, currency: str) -> Say:
    return Say(en=f", about {cost} {currency}", ru=f", около {cost} {currency}")


@phrase
def usage_unpriced(models: str) -> Say:
    return Say(en=f" (no price for {models})", ru=f" (нет цены для {models})")


@phrase
def usage_how_to_price(models: str) -> Say:
    return Say(
        en=f"No cost is shown for {models}: its price per million tokens is not set "
        "(runtime config, usage.prices; docs/CONFIGURATION.md).",
        ru=f"Стоимость для {models} не показана: не задана цена за миллион токенов "
        "(runtime config, usage.prices; docs/CONFIGURATION.md).",
    )


@phrase
def usage_today(amount: str) -> Say:
    return Say(en=f"Today (UTC): {amount}", ru=f"Сегодня (UTC): {amount}")


@phrase
def usage_token_budget(used: int, budget: int) -> Say:
    return Say(
        en=f"Daily budget: {used:,} of {budget:,} tokens used",
        ru=f"Дневной бюджет: израсходовано {number_ru(used)} из {number_ru(budget)} токенов",
    )


@phrase
def usage_cost_budget(spent: str, budget: str, currency: str) -> Say:
    return Say(
        en=f"Daily budget: {spent} of {budget} {currency} used",
        ru=f"Дневной бюджет: израсходовано {spent} из {budget} {currency}",
    )


@phrase
def usage_nobody_yet() -> Say:
    return Say(en="All users today: nothing yet.", ru="Все пользователи за сегодня: пока ничего.")


@phrase
def usage_everyone(users: int, amount: str) -> Say:
    return Say(
        en=f"All users today ({users:,}): {amount}",
        ru=f"Все пользователи за сегодня ({number_ru(users)}): {amount}",
    )


@phrase
def usage_more_users(more: int) -> Say:
    return Say(en=f"  … and {more:,} more.", ru=f"  … и ещё {number_ru(more)}.")


# `/language`.


@phrase
def language_name() -> Say:
    """The language's own name, in itself."""
    return Say(en="English", ru="русский")


@phrase
def language_state(chosen: bool, terminal: bool) -> Say:
    """`terminal`: the automatic language is the locale's, not a Telegram app's."""
    auto_en = "your system's language (LANG)" if terminal else "your Telegram app's language"
    auto_ru = "язык вашей системы (LANG)" if terminal else "язык вашего приложения Telegram"
    return Say(
        en="I speak English with you" + (" (your choice)." if chosen else f" (auto: {auto_en})."),
        ru="Я говорю с вами по-русски" + (" (ваш выбор)." if chosen else f" (авто: {auto_ru})."),
    )


@phrase
def language_usage(terminal: bool) -> Say:
    auto_en = "your system's language" if terminal else "your app's language"
    auto_ru = "язык системы" if terminal else "язык приложения"
    return Say(
        en=f"/language en, /language ru or /language auto ({auto_en}) changes it.",
        ru=f"/language en, /language ru или /language auto ({auto_ru}) меняет его.",
    )


# Telegram's `/start` and `/voice`.


@phrase
def start_greeting(name: str, remembers: bool) -> Say:
    memory_en = (
        "I keep our conversation, so follow-up questions work, and I remember what you "
        "tell me across conversations."
        if remembers
        else "I keep our conversation, so follow-up questions work."
    )
    memory_ru = (
        "Я помню наш разговор, так что можно задавать уточняющие вопросы, и запоминаю то, "
        "что вы рассказываете, от разговора к разговору."
        if remembers
        else "Я помню наш разговор, так что можно задавать уточняющие вопросы."
    )
    return Say(
        en=f"Hi{f' {name}' if name else ''}! I'm your assistant: ask me anything, "
        f"and I can use tools such as a calculator and the clock.\n{memory_en}\n"
        "/new starts a fresh conversation, /help lists the commands.",
        ru=f"Привет{f', {name}' if name else ''}! Я ваш ассистент: спрашивайте что угодно, "
        f"и я умею пользоваться инструментами, например калькулятором и часами.\n{memory_ru}\n"
        "/new начинает разговор заново, /help показывает команды.",
    )


@phrase
def voice_not_set_up() -> Say:
    return Say(
        en="Voice replies are not set up on this bot; its operator can turn them on "
        "(speech.voiceReplies in the runtime config).",
        ru="Ответы голосом у этого бота не настроены; оператор может их включить "
        "(speech.voiceReplies в рабочей конфигурации).",
    )


@phrase
def voice_state(choice: Literal["on", "off", "auto"]) -> Say:
    en = {
        "on": "on: I answer in this chat with a voice note as well as text",
        "off": "off in this chat, also for voice notes",
    }.get(choice, "auto: I answer your voice notes with a voice note too")
    ru = {
        "on": "включены: в этом чате я отвечаю и текстом, и голосовым сообщением",
        "off": "выключены в этом чате, даже на голосовые сообщения",
    }.get(choice, "авто: на голосовые сообщения я отвечаю тоже голосом")
    return Say(
        en=f"Voice replies {en}.\n/voice on, /voice off or /voice auto changes it.",
        ru=f"Ответы голосом {ru}.\n/voice on, /voice off или /voice auto меняет это.",
    )


@phrase
def choice_not_saved() -> Say:
    return Say(
        en="I could not save that choice (the disk refused it). Please try again later.",
        ru="Не получилось сохранить этот выбор (диск отказал). Попробуйте позже.",
    )


# `/skill`.


@phrase
def about_reminders() -> Say:
    return Say(
        en="your reminders in this chat; cancel one",
        ru="ваши напоминания в этом чате; отменить одно",
    )


@phrase
def about_skill() -> Say:
    return Say(en="list the skills, or pick one", ru="список навыков или выбор навыка")


@phrase
def no_skill_active() -> Say:
    return Say(en="No skill is active in this chat.", ru="В этом чате нет активного навыка.")


@phrase
def skill_off(name: str) -> Say:
    return Say(
        en=f"Skill {name} is off for this chat.",
        ru=f"Навык {name} выключен для этого чата.",
    )


@phrase
def no_such_skill(name: str) -> Say:
    return Say(
        en=f"There is no skill {name}. Send /skill to see them.",
        ru=f"Навыка {name} нет. Отправьте /skill, чтобы увидеть список.",
    )


@phrase
def skill_active(name: str, description: str) -> Say:
    return Say(
        en=f"Skill {name} is active in this chat: {description}",
        ru=f"Навык {name} активен в этом чате: {description}",
    )


@phrase
def no_skills_yet() -> Say:
    return Say(
        en="There are no skills yet: the operator adds them in preferences/skills/.",
        ru="Навыков пока нет: оператор добавляет их в preferences/skills/.",
    )


@phrase
def skills_heading(active: bool) -> Say:
    return Say(
        en="Skills (→ this chat's):" if active else "Skills (none active in this chat):",
        ru="Навыки (→ навык этого чата):" if active else "Навыки (в этом чате ни один не активен):",
    )


@phrase
def skills_heading_unavailable(name: str) -> Say:
    return Say(
        en=f"Skills (this chat's, {name}, is not available now):",
        ru=f"Навыки (навык этого чата, {name}, сейчас недоступен):",
    )


@phrase
def skill_usage() -> Say:
    return Say(
        en="/skill <name> activates one, /skill off turns it off.",
        ru="/skill <название> включает навык, /skill off выключает.",
    )


@phrase
def skills_status(count: int, names: str) -> Say:
    return Say(
        en=f"Skills: {count} ({names}); /skill lists them",
        ru=f"Навыки: {count} ({names}); /skill показывает их",
    )


@phrase
def skill_left_out(folder: str, reason: str) -> Say:
    return Say(
        en=f"⚠ Skill {folder} left out: {reason}",
        ru=f"⚠ Навык {folder} пропущен: {reason}",
    )
