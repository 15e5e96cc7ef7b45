"""What the channels say on their own: strangers and floods turned away, attachments the
bot cannot read, voice notes heard or not, files too large, the terminal's banner."""

from __future__ import annotations

from bot.i18n.phrase import Say, decimal_ru, phrase

KINDS_RU = {
    "photo": "фото",
    "sticker": "стикер",
    "voice": "голосовое сообщение",
    "audio": "аудиофайл",
    "video": "видео",
    "video note": "видеосообщение",
    "animation": "анимация",
    "document": "документ",
    "location": "геопозиция",
    "venue": "место",
    "contact": "контакт",
    "poll": "опрос",
    "dice": "кубик",
    "story": "история",
}
"""Telegram's attachment kinds (`Attachment.spoken`), in Russian, as a sentence names them
after a colon (nominative); an unknown kind stays as Telegram names it."""


def _kind_ru(kind: str) -> str:
    return KINDS_RU.get(kind, kind)


@phrase
def stranger_refused(user_id: int) -> Say:
    return Say(
        en="Sorry, this is a private assistant and you are not on its list of users. "
        f"If you know its owner, send them your Telegram user id: {user_id}",
        ru="Извините, это личный ассистент, и вас нет в списке его пользователей. "
        f"Если вы знаете владельца, отправьте ему свой id в Telegram: {user_id}",
    )


@phrase
def slow_down(limit_per_minute: int, retry_in_seconds: int) -> Say:
    return Say(
        en=f"You are sending messages faster than I take them ({limit_per_minute} a minute), "
        f"so I skipped this one. Please send it again in {retry_in_seconds} seconds; "
        "messages sent before then are skipped too.",
        ru=f"Вы отправляете сообщения быстрее, чем я их принимаю ({limit_per_minute} в минуту), "
        f"поэтому это я пропустил. Отправьте его снова через {retry_in_seconds} с; "
        "сообщения до этого времени тоже пропускаются.",
    )


@phrase
def attachment_only(kind: str) -> Say:
    return Say(
        en=f"I can only read text, so this {kind} is lost on me. Please write your message "
        "as text; a caption on a photo or a file is read as text too.",
        ru=f"Я читаю только текст, так что это вложение ({_kind_ru(kind)}) мне недоступно. "
        "Пожалуйста, напишите сообщение текстом; подпись к фото или файлу тоже читается как "
        "текст.",
    )


@phrase
def gave_up() -> Say:
    return Say(
        en="Sorry, I could not process this message (it failed twice).",
        ru="Извините, я не смог обработать это сообщение (дважды не получилось).",
    )


@phrase
def unheard() -> Say:
    return Say(
        en="Sorry, something went wrong while I listened to this. Please try again.",
        ru="Извините, что-то пошло не так, пока я это слушал. Пожалуйста, попробуйте ещё раз.",
    )


@phrase
def empty_mention() -> Say:
    return Say(
        en="Yes? Write your question in the same message as the mention.",
        ru="Да? Напишите вопрос в том же сообщении, что и упоминание.",
    )


@phrase
def heard(transcript: str) -> Say:
    return Say(en=f"I heard: “{transcript}”", ru=f"Я услышал: «{transcript}»")


@phrase
def transcription_off(kind: str) -> Say:
    return Say(
        en=f"I can't listen to a {kind} on this bot (speech transcription is off). "
        "Please write your message as text.",
        ru=f"Этот бот не умеет слушать вложения ({_kind_ru(kind)}): распознавание речи "
        "выключено. Пожалуйста, напишите сообщение текстом.",
    )


@phrase
def no_sound(kind: str) -> Say:
    return Say(
        en=f"This {kind} is empty: there is no sound in it.",
        ru=f"Это вложение ({_kind_ru(kind)}) пустое: в нём нет звука.",
    )


@phrase
def audio_unplayable(kind: str) -> Say:
    return Say(
        en=f"I could not play this {kind}: it seems damaged, or in a format I don't know.",
        ru=f"Не получилось воспроизвести вложение ({_kind_ru(kind)}): похоже, оно повреждено "
        "или в незнакомом мне формате.",
    )


@phrase
def not_transcribed(kind: str, reason: str) -> Say:
    return Say(
        en=f"I could not transcribe this {kind}: {reason}. Please try again later, "
        "or write it as text.",
        ru=f"Не получилось распознать вложение ({_kind_ru(kind)}): {reason}. Пожалуйста, "
        "попробуйте позже или напишите текстом.",
    )


@phrase
def no_words(kind: str) -> Say:
    return Say(
        en=f"I listened, but could not make out any words in this {kind}.",
        ru=f"Я послушал, но не разобрал ни слова (вложение: {_kind_ru(kind)}).",
    )


@phrase
def audio_too_slow(kind: str) -> Say:
    return Say(
        en=f"This {kind} took me too long to decode, so I stopped. Please try again later, "
        "or send a shorter one.",
        ru=f"Вложение ({_kind_ru(kind)}) слишком долго декодировалось, и я остановился. "
        "Пожалуйста, попробуйте позже или пришлите покороче.",
    )


@phrase
def audio_too_long(kind: str, max_minutes: float) -> Say:
    return Say(
        en=f"This {kind} is too long for me: I listen to up to {max_minutes:g} minutes. "
        "Please send a shorter one.",
        ru=f"Это вложение ({_kind_ru(kind)}) для меня слишком длинное: я слушаю не больше "
        f"{decimal_ru(max_minutes)} мин. Пожалуйста, пришлите покороче.",
    )


@phrase
def no_voice_this_time(reason: str) -> Say:
    return Say(
        en=f"(No voice this time: {reason}.)",
        ru=f"(В этот раз без голоса: {reason}.)",
    )


@phrase
def unplayable_speech() -> Say:
    return Say(
        en="the speech service sent unplayable audio",
        ru="сервис синтеза речи прислал звук, который нельзя воспроизвести",
    )


@phrase
def file_too_large(kind: str, limit: str) -> Say:
    return Say(
        en=f"This {kind} is too large for me: I can take files of up to {limit}. "
        "Please send a shorter or smaller one.",
        ru=f"Это вложение ({_kind_ru(kind)}) для меня слишком большое: я принимаю файлы до "
        f"{limit}. Пожалуйста, пришлите покороче или поменьше.",
    )


@phrase
def file_unavailable(kind: str) -> Say:
    return Say(
        en=f"I could not fetch this {kind} from Telegram. Please send it again in a moment.",
        ru=f"Не получилось забрать вложение ({_kind_ru(kind)}) у Telegram. Пожалуйста, "
        "отправьте его снова чуть позже.",
    )


@phrase
def terminal_banner() -> Say:
    return Say(
        en="Chat with the bot here. /help lists the commands, /new starts afresh, /quit leaves.",
        ru="Общайтесь с ботом здесь. /help показывает команды, /new начинает заново, "
        "/quit — выход.",
    )


@phrase
def terminal_unreadable_line() -> Say:
    return Say(
        en="That line was not readable text (not UTF-8?), so I left it out. Please type it again.",
        ru="Эту строку не удалось прочитать как текст (не UTF-8?), я её пропустил. "
        "Наберите её ещё раз, пожалуйста.",
    )


@phrase
def about_quit() -> Say:
    return Say(en="leave the chat (Ctrl+D too)", ru="выйти из чата (или Ctrl+D)")


@phrase
def quit_alone() -> Say:
    return Say(
        en="To leave, send /quit on its own.",
        ru="Чтобы выйти, отправьте /quit отдельной строкой.",
    )


@phrase
def empty_reply() -> Say:
    return Say(en="(empty reply)", ru="(пустой ответ)")


# Why speech failed (`bot/adapters/openai_speech.py`), in a sentence of `not_transcribed` or
# `no_voice_this_time`; `listening`: speech to text, else text to speech.


def _service_en(listening: bool) -> str:
    return "the speech-to-text service" if listening else "the speech service"


def _service_ru(listening: bool) -> str:
    return "сервис распознавания речи" if listening else "сервис синтеза речи"


@phrase
def speech_credentials(listening: bool) -> Say:
    return Say(
        en=f"{_service_en(listening)} refused the bot's credentials (the operator needs to "
        "check them)",
        ru=f"{_service_ru(listening)} отклонил учётные данные бота (оператору нужно их проверить)",
    )


@phrase
def speech_unknown_model(listening: bool, model: str) -> Say:
    return Say(
        en=f"{_service_en(listening)} does not know the model '{model}' (the operator needs to "
        "check it)",
        ru=f"{_service_ru(listening)} не знает модель '{model}' (оператору нужно это проверить)",
    )


@phrase
def speech_busy(listening: bool) -> Say:
    return Say(
        en=f"{_service_en(listening)} is busy (rate limited)",
        ru=f"{_service_ru(listening)} перегружен (ограничение частоты запросов)",
    )


@phrase
def speech_unreachable(listening: bool) -> Say:
    return Say(
        en=f"{_service_en(listening)} is not reachable right now",
        ru=f"{_service_ru(listening)} сейчас недоступен",
    )


@phrase
def speech_timed_out(listening: bool, seconds: float) -> Say:
    return Say(
        en=f"{_service_en(listening)} did not answer within {seconds:g} seconds",
        ru=f"{_service_ru(listening)} не ответил за {decimal_ru(seconds)} с",
    )


@phrase
def speech_failing(listening: bool, status: int) -> Say:
    return Say(
        en=f"{_service_en(listening)} is failing (HTTP {status})",
        ru=f"{_service_ru(listening)} сбоит (HTTP {status})",
    )


@phrase
def speech_refused(listening: bool, status: int) -> Say:
    return Say(
        en=f"{_service_en(listening)} refused this audio (HTTP {status})",
        ru=f"{_service_ru(listening)} отклонил этот звук (HTTP {status})",
    )


@phrase
def speech_unreadable(listening: bool) -> Say:
    return Say(
        en=f"{_service_en(listening)} sent an answer I could not read",
        ru=f"{_service_ru(listening)} прислал ответ, который я не смог прочитать",
    )


@phrase
def guest_answer_cut() -> Say:
    return Say(
        en="(Cut here: a guest answer is one message. Ask me in a private chat for all of it.)",
        ru="(Ответ обрезан: в гостях я отвечаю одним сообщением. Спросите меня в личном чате, "
        "чтобы получить его целиком.)",
    )
