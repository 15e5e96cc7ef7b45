"""`/memory`, `/forget`, `/remember`, and memory's lines in `/status`."""

from __future__ import annotations

from bot.i18n.phrase import Say, decimal_ru, number_ru, phrase, plural_en, plural_ru

STORE_NAMES_RU = {
    "short-term memory items": "записи краткосрочной памяти",
    "long-term documents (LightRAG)": "документы долгосрочной памяти (LightRAG)",
    "messages in conversations (current and archived)": "сообщения разговоров (текущих и архивных)",
    "received Telegram messages kept on disk": "полученные сообщения Telegram, хранящиеся на диске",
    "reminders and your time zone": "напоминания и ваш часовой пояс",
}
"""Russian names of what each memory store holds (`UserMemoryStore.label`, English, is also
what the log says). A store added at the composition root adds its name here;
`tests/unit/test_i18n_catalogue.py` checks every store of a built app has one."""


@phrase
def store_name(label: str) -> Say:
    return Say(en=label, ru=STORE_NAMES_RU.get(label, label))


@phrase
def group_forget_refusal() -> Say:
    return Say(
        en="Only the bot's operators can make me forget what this group told me "
        "(telegram.adminUsers in the runtime config).",
        ru="Заставить меня забыть то, что рассказала эта группа, могут только операторы бота "
        "(telegram.adminUsers в рабочей конфигурации).",
    )


@phrase
def forget_usage() -> Say:
    return Say(
        en="Usage: /forget <id> deletes one item (/memory shows the ids); "
        "/forget all deletes everything I remember about you.",
        ru="Как пользоваться: /forget <id> удаляет одну запись (номера показывает /memory); "
        "/forget all удаляет всё, что я о вас помню.",
    )


@phrase
def remembered_header(group: bool, count: int) -> Say:
    return Say(
        en=f"What I remember {'from this group' if group else 'about you'} "
        f"({count:,}, newest first):",
        ru=f"Что я помню {'из этой группы' if group else 'о вас'} "
        f"({number_ru(count)}, сначала новые):",
    )


@phrase
def item_kind(kind: str) -> Say:
    """The kinds of `bot/memory/model.py` (`TypeTraits.label`)."""
    names = {
        "about the user": "о пользователе",
        "constraint": "ограничение",
        "preference": "предпочтение",
        "fact": "факт",
        "how-to": "инструкция",
        "earlier": "ранее",
        "document": "документ",
    }
    return Say(en=kind, ru=names.get(kind, kind))


@phrase
def older_items(more: int) -> Say:
    return Say(
        en=f"… and {plural_en(more, 'older one', 'older ones')}.",
        ru=f"… и ещё {plural_ru(more, 'более старая', 'более старые', 'более старых')}.",
    )


@phrase
def nothing_remembered_yet(group: bool) -> Say:
    return Say(
        en=f"I have no facts or how-tos {'from this group' if group else 'about you'} yet.",
        ru=f"Фактов и инструкций {'из этой группы' if group else 'о вас'} у меня пока нет.",
    )


@phrase
def snippets(count: int) -> Say:
    return Say(
        en=f"Snippets of recent conversations: {count:,}",
        ru=f"Фрагменты недавних разговоров: {number_ru(count)}",
    )


@phrase
def document_parts(count: int) -> Say:
    return Say(
        en=f"Parts of documents you shared: {count:,} (/forget <a document's id above> deletes "
        "its text)",
        ru=f"Части присланных документов: {number_ru(count)} (/forget <номер документа выше> "
        "удаляет его текст)",
    )


@phrase
def recallable_header(words: str) -> Say:
    return Say(
        en=f"What I could recall about “{words}”:",
        ru=f"Что я могу вспомнить о «{words}»:",
    )


@phrase
def nothing_about(words: str) -> Say:
    return Say(
        en=f"I remember nothing about “{words}”.",
        ru=f"О «{words}» я ничего не помню.",
    )


@phrase
def facts_heading() -> Say:
    return Say(en="Facts:", ru="Факты:")


@phrase
def snippets_heading() -> Say:
    return Say(en="Conversation snippets:", ru="Фрагменты разговоров:")


@phrase
def parts_heading() -> Say:
    return Say(en="Parts of shared documents:", ru="Части присланных документов:")


@phrase
def long_term_not_listed() -> Say:
    return Say(
        en="Long-term memory (LightRAG) is not listed here: /forget all deletes it.",
        ru="Долгосрочная память (LightRAG) здесь не показана: /forget all удаляет её.",
    )


@phrase
def snippets_forgotten(count: int, ids: str) -> Say:
    return Say(
        en=f"Also deleted {plural_en(count, 'conversation snippet', 'conversation snippets')} "
        f"that held the same words ({ids}).",
        ru=f"Также удалены фрагменты разговоров с теми же словами: {number_ru(count)} ({ids}).",
    )


@phrase
def parts_forgotten(count: int) -> Say:
    return Say(
        en=f"Also deleted the document's text ({plural_en(count, 'part', 'parts')}).",
        ru=f"Также удалён текст документа (частей: {number_ru(count)}).",
    )


@phrase
def long_term_may_hold() -> Say:
    return Say(
        en="Long-term memory (LightRAG) could not be searched just now, so it may still hold "
        "conversations with these words; /forget all deletes all of yours there.",
        ru="Долгосрочную память (LightRAG) сейчас не удалось просмотреть, так что в ней ещё "
        "могут быть разговоры с этими словами; /forget all удаляет там все ваши.",
    )


@phrase
def long_term_forgotten(count: int) -> Say:
    return Say(
        en=f"Deleted {plural_en(count, 'document', 'documents')} holding them from long-term "
        "memory (LightRAG) too.",
        ru=f"Из долгосрочной памяти (LightRAG) тоже удалены документы с ними: {number_ru(count)}.",
    )


@phrase
def remembering_state(group: bool, on: bool) -> Say:
    en_state = "on" if on else "OFF (/remember on resumes)"
    ru_state = "включено" if on else "ВЫКЛЮЧЕНО (/remember on возобновляет)"
    return Say(
        en=f"Remembering what you say: {en_state}" if group else f"Remembering: {en_state}",
        ru=f"Запоминание ваших слов: {ru_state}" if group else f"Запоминание: {ru_state}",
    )


@phrase
def group_memory_apart() -> Say:
    return Say(
        en="Your private memory is never used here, and this group's stays here.",
        ru="Ваша личная память здесь не используется, а память этой группы остаётся здесь.",
    )


@phrase
def how_to_forget() -> Say:
    return Say(
        en="/forget <id> deletes one item (and what holds its words), /forget all deletes "
        "everything. /memory <words> shows what I recall about them.",
        ru="/forget <id> удаляет одну запись (и то, что хранит те же слова), /forget all "
        "удаляет всё. /memory <слова> показывает, что я о них помню.",
    )


@phrase
def no_such_item(item_id: str) -> Say:
    return Say(
        en=f"I have no item #{item_id}. Send /memory to see the ids.",
        ru=f"Записи #{item_id} у меня нет. Отправьте /memory, чтобы увидеть номера.",
    )


@phrase
def forgotten(content: str) -> Say:
    return Say(en=f"Forgotten: {content}", ru=f"Забыто: {content}")


@phrase
def remember_usage(on: bool) -> Say:
    return Say(
        en=f"Remembering is {'on' if on else 'off'} for you. Usage: /remember off or /remember on.",
        ru=f"Запоминание для вас {'включено' if on else 'выключено'}. "
        "Как пользоваться: /remember off или /remember on.",
    )


@phrase
def remember_not_recorded() -> Say:
    return Say(
        en="I can't change this now: my settings file is damaged or cannot be written. "
        "Please tell the operator.",
        ru="Сейчас не могу это изменить: файл настроек повреждён или не записывается. "
        "Пожалуйста, сообщите оператору.",
    )


@phrase
def remembering_off() -> Say:
    """Says what is still kept: the conversation itself, which the bot needs to follow it."""
    return Say(
        en="Okay: from now on I add nothing to my memory of you, short-term or long-term, "
        "and index nothing for recall. I still keep our conversation itself (this chat's "
        "messages) so that I can follow it: /new sets it aside in the archive, /forget all "
        "deletes it. What I already remember stays (/memory shows it, /forget deletes it). "
        "Send /remember on to resume.",
        ru="Хорошо: с этого момента я ничего не добавляю в память о вас — ни в краткосрочную, "
        "ни в долгосрочную — и ничего не индексирую для припоминания. Сам наш разговор "
        "(сообщения этого чата) я по-прежнему храню, чтобы следить за ним: /new откладывает "
        "его в архив, /forget all удаляет. То, что я уже помню, остаётся (/memory показывает, "
        "/forget удаляет). Отправьте /remember on, чтобы возобновить.",
    )


@phrase
def remembering_on() -> Say:
    return Say(
        en="Okay: I remember our conversations again.",
        ru="Хорошо: я снова запоминаю наши разговоры.",
    )


@phrase
def nothing_to_forget(group: bool) -> Say:
    return Say(
        en=f"I don't remember anything {'from this group' if group else 'about you'}, "
        "so there is nothing to forget.",
        ru=f"Я ничего не помню {'из этой группы' if group else 'о вас'}, так что забывать нечего.",
    )


@phrase
def confirm_forget_all(group: bool, listing: str, seconds: float) -> Say:
    return Say(
        en=f"This deletes everything I remember {'from this group' if group else 'about you'}: "
        f"{listing}. It cannot be undone. To go ahead, send /forget confirm within "
        f"{_duration_en(seconds)}.",
        ru=f"Это удалит всё, что я помню {'из этой группы' if group else 'о вас'}: {listing}. "
        "Отменить это будет нельзя. Чтобы продолжить, отправьте /forget confirm в течение "
        f"{_duration_ru(seconds)}.",
    )


@phrase
def nothing_to_confirm(seconds: float) -> Say:
    return Say(
        en="There is nothing to confirm: send /forget all first "
        f"(a confirmation is valid for {_duration_en(seconds)}).",
        ru="Подтверждать нечего: сначала отправьте /forget all "
        f"(подтверждение действует в течение {_duration_ru(seconds)}).",
    )


@phrase
def forgot_all(listing: str) -> Say:
    return Say(en=f"Done: deleted {listing}.", ru=f"Готово: удалено — {listing}.")


@phrase
def lightrag_graph_may_keep() -> Say:
    return Say(
        en="LightRAG may still keep what its model drew from them in the descriptions of names "
        "they share with your other conversations (its knowledge graph and its cache); "
        "/forget all removes those with everything else.",
        ru="LightRAG ещё может хранить то, что его модель извлекла из них, в описаниях имён, "
        "общих с другими вашими разговорами (его граф знаний и кэш); /forget all удаляет их "
        "вместе со всем остальным.",
    )


@phrase
def lightrag_cache_may_keep() -> Say:
    return Say(
        en="LightRAG's cache may still hold summaries its own model wrote from them while "
        "indexing: its server can only empty that cache for every user at once, which is "
        "the operator's to do.",
        ru="В кэше LightRAG ещё могут оставаться сводки, которые его модель написала по ним "
        "при индексации: сервер умеет очищать этот кэш только сразу для всех, это делает "
        "оператор.",
    )


@phrase
def could_not_forget(names: str) -> Say:
    return Say(
        en=f"I could not delete the {names}; please try again later.",
        ru=f"Не удалось удалить: {names}; пожалуйста, попробуйте позже.",
    )


@phrase
def remembering_off_for_everyone(file_name: str) -> Say:
    return Say(
        en=f"Remembering: off for everyone ({file_name} is unreadable)",
        ru=f"Запоминание: выключено для всех ({file_name} не читается)",
    )


@phrase
def remembering_off_for_you() -> Say:
    return Say(
        en="Remembering: off for you (/remember on resumes)",
        ru="Запоминание: выключено для вас (/remember on возобновляет)",
    )


def _duration_en(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def _duration_ru(seconds: float) -> str:
    """In the genitive, after `в течение`: `2 минут`, `1 минуты`, `2,5 минуты`."""
    value, forms = (
        (seconds / 60, ("минуты", "минут")) if seconds >= 120 else (seconds, ("секунды", "секунд"))
    )
    if value != int(value):
        return f"{decimal_ru(value)} {forms[0]}"
    return plural_ru(int(value), forms[0], forms[1], forms[1])
