"""Photos and documents: what was read and kept, and why a file was not read."""

from __future__ import annotations

from bot.i18n.phrase import Say, number_ru, phrase, plural_en, plural_ru


@phrase
def nothing_stored(reason: str) -> Say:
    return Say(en=f"{reason} Nothing was stored.", ru=f"{reason} Ничего не сохранено.")


@phrase
def size_in_characters(chars: int) -> Say:
    return Say(
        en=plural_en(chars, "character", "characters"),
        ru=plural_ru(chars, "символ", "символа", "символов"),
    )


@phrase
def size_in_pages(pages: int, chars: int) -> Say:
    return Say(
        en=f"{plural_en(pages, 'page', 'pages')}, {plural_en(chars, 'character', 'characters')}",
        ru=f"{plural_ru(pages, 'страница', 'страницы', 'страниц')}, "
        f"{plural_ru(chars, 'символ', 'символа', 'символов')}",
    )


@phrase
def no_text_in_pdf(name: str, pages: int) -> Say:
    return Say(
        en=f"I opened {name} ({plural_en(pages, 'page', 'pages')}) but found no text in it: it "
        "looks like a scan (pictures of pages), and I can't read text in pictures. Nothing was "
        "stored. A PDF with a text layer, or the text pasted in a message, would work.",
        ru=f"Я открыл {name} ({plural_ru(pages, 'страница', 'страницы', 'страниц')}), но "
        "текста в нём нет: похоже на скан (картинки страниц), а текст на картинках я читать не "
        "умею. Ничего не сохранено. Подойдёт PDF с текстовым слоем или текст, вставленный в "
        "сообщение.",
    )


@phrase
def empty_file(name: str) -> Say:
    return Say(
        en=f"{name} has no text in it, so there was nothing to remember.",
        ru=f"В {name} нет текста, так что запоминать было нечего.",
    )


@phrase
def read_not_remembering(name: str, summary: str) -> Say:
    return Say(
        en=f"I read {name} ({summary}), but you've turned remembering off (/remember on turns "
        "it back on), so I haven't kept it.",
        ru=f"Я прочитал {name} ({summary}), но вы выключили запоминание (/remember on включает "
        "его снова), поэтому я его не сохранил.",
    )


@phrase
def read_memory_off(name: str, summary: str) -> Say:
    return Say(
        en=f"I read {name} ({summary}), but memory is off on this bot (memory.enabled and "
        "rag.enabled), so I can't keep it to answer questions about it later.",
        ru=f"Я прочитал {name} ({summary}), но память у этого бота выключена (memory.enabled и "
        "rag.enabled), так что сохранить его, чтобы потом отвечать на вопросы, я не могу.",
    )


@phrase
def filed(name: str, summary: str, cut: str, group: bool) -> Say:
    """Kept in long-term memory (LightRAG) alone: short-term memory is off."""
    whose = "this group's" if group else "my"
    return Say(
        en=f"I read {name}: {summary}{cut}. It's in {whose} long-term memory now: ask me about "
        "it any time (it takes a minute or so to be searchable).",
        ru=f"Я прочитал {name}: {summary}{cut}. Теперь он в долгосрочной памяти "
        f"{'этой группы' if group else 'у меня'}: спрашивайте о нём когда угодно (искать по "
        "нему можно примерно через минуту).",
    )


@phrase
def kept(name: str, summary: str, cut: str, group: bool, note_id: str) -> Say:
    """Kept in short-term memory (and in LightRAG too when it is on)."""
    whose = "this group's" if group else "my"
    return Say(
        en=f"I read {name}: {summary}{cut}. It's in {whose} memory now: ask me about it any "
        f"time, also after /new (/memory lists it; /forget {note_id} deletes it).",
        ru=f"Я прочитал {name}: {summary}{cut}. Теперь он в памяти "
        f"{'этой группы' if group else 'у меня'}: спрашивайте о нём когда угодно, и после /new "
        f"(/memory покажет его; /forget {note_id} удалит).",
    )


@phrase
def could_not_keep(name: str, summary: str) -> Say:
    return Say(
        en=f"I read {name} ({summary}), but I could not write it to memory (the disk refused "
        "it; the log says why), so I can't answer questions about it later.",
        ru=f"Я прочитал {name} ({summary}), но не смог записать его в память (диск отказал; "
        "причина в журнале), так что потом отвечать на вопросы о нём не смогу.",
    )


@phrase
def parts_cut(chars: int, parts: int) -> Say:
    return Say(
        en=f" Only its first {chars:,} characters are in my short-term memory (a document is "
        f"kept in {parts:,} parts at most).",
        ru=f" В краткосрочной памяти только первые {number_ru(chars)} символов (документ "
        f"хранится не более чем в {number_ru(parts)} частях).",
    )


@phrase
def rest_cut() -> Say:
    return Say(
        en=" (the rest was cut: the limit is media.documentMaxChars)",
        ru=" (остальное обрезано: предел — media.documentMaxChars)",
    )


@phrase
def first_pages_read(pages_read: int) -> Say:
    return Say(
        en=f" (I read the first {plural_en(pages_read, 'page', 'pages')}: the limit is "
        "media.documentMaxPages)",
        ru=f" (я прочитал первые {plural_ru(pages_read, 'страницу', 'страницы', 'страниц')}: "
        "предел — media.documentMaxPages)",
    )


@phrase
def vision_off() -> Say:
    return Say(
        en="I can't look at images: this bot's model is set up for text only (llm.vision is "
        "off). Please describe what's in it in words.",
        ru="Я не могу смотреть изображения: модель этого бота настроена только на текст "
        "(llm.vision выключен). Пожалуйста, опишите словами, что на нём.",
    )


@phrase
def picture_unseen() -> Say:
    return Say(
        en="I can't see the picture itself (llm.vision is off), so I'm answering your words.",
        ru="Саму картинку я не вижу (llm.vision выключен), поэтому отвечаю на ваши слова.",
    )


@phrase
def unknown_type(name: str) -> Say:
    return Say(
        en=f"I can't open {name}: I read PDF, DOCX, TXT and Markdown documents, and look at "
        "photos. Nothing was stored.",
        ru=f"Не могу открыть {name}: я читаю документы PDF, DOCX, TXT и Markdown и смотрю фото. "
        "Ничего не сохранено.",
    )


@phrase
def image_too_large(width: int, height: int, max_pixels: int) -> Say:
    return Say(
        en=f"This image is too large to look at ({width}×{height} pixels; the limit is "
        f"{max_pixels:,} pixels, media.imageMaxPixels).",
        ru=f"Это изображение слишком большое ({width}×{height} пикселей; предел — "
        f"{number_ru(max_pixels)} пикселей, media.imageMaxPixels).",
    )


@phrase
def image_unreadable(error: str) -> Say:
    return Say(
        en=f"I couldn't open this image ({error}): it seems damaged or is a format I don't know.",
        ru=f"Не получилось открыть изображение ({error}): похоже, оно повреждено или в "
        "незнакомом мне формате.",
    )


@phrase
def not_a_document(kind: str) -> Say:
    return Say(
        en=f"I can't read {kind} files as documents.",
        ru=f"Файлы {kind} я как документы читать не умею.",
    )


@phrase
def pdf_password() -> Say:
    return Say(
        en="This PDF is protected by a password, so I can't read it.",
        ru="Этот PDF защищён паролем, так что прочитать его я не могу.",
    )


@phrase
def pdf_damaged(error: str) -> Say:
    return Say(
        en=f"This PDF seems damaged: I couldn't read it ({error}).",
        ru=f"Этот PDF, похоже, повреждён: прочитать его не получилось ({error}).",
    )


@phrase
def docx_damaged() -> Say:
    return Say(
        en="This doesn't look like a Word document (.docx) I can open: the file seems damaged "
        "or is another format.",
        ru="Это не похоже на документ Word (.docx), который я могу открыть: файл, похоже, "
        "повреждён или в другом формате.",
    )


@phrase
def binary_file() -> Say:
    return Say(
        en="This file holds binary data, not text, so I can't read it.",
        ru="В этом файле двоичные данные, а не текст, так что прочитать его я не могу.",
    )


@phrase
def read_stopped(seconds: float) -> Say:
    return Say(
        en="Reading this file was stopped before it finished: it may be too large or damaged "
        f"(the limit is {seconds:g} seconds, media.readTimeoutSeconds).",
        ru="Чтение этого файла остановлено до конца: возможно, он слишком большой или "
        f"повреждён (предел — {seconds:g} с, media.readTimeoutSeconds).",
    )


@phrase
def too_costly(seconds: int) -> Say:
    return Say(
        en=f"This file takes too much work to read (over {seconds} seconds of processor time, "
        "media.readCpuSeconds), so I stopped. Nothing was stored. A smaller or simpler file, "
        "or its text pasted as a message, will work.",
        ru=f"Этот файл слишком трудоёмко читать (больше {seconds} с процессорного времени, "
        "media.readCpuSeconds), поэтому я остановился. Ничего не сохранено. Подойдёт файл "
        "поменьше или попроще, или его текст, вставленный в сообщение.",
    )


@phrase
def read_not_started() -> Say:
    return Say(
        en="I couldn't start reading this file (a problem on my side).",
        ru="Не получилось начать чтение этого файла (проблема на моей стороне).",
    )


@phrase
def read_failed() -> Say:
    return Say(
        en="Reading this file failed (a problem on my side).",
        ru="Прочитать этот файл не удалось (проблема на моей стороне).",
    )


@phrase
def needs_more_memory() -> Say:
    return Say(
        en="This file needs more memory to read than I allow, so I stopped.",
        ru="Для чтения этого файла нужно больше памяти, чем я позволяю, поэтому я остановился.",
    )


@phrase
def file_damaged(error: str) -> Say:
    return Say(
        en=f"I couldn't read this file ({error}): it seems damaged.",
        ru=f"Не получилось прочитать этот файл ({error}): похоже, он повреждён.",
    )
