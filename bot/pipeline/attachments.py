"""Order 10: a photo for the model to look at, or a document to read and remember.

A photo, with `llm.vision` on, is shrunk and handed to the tool loop as an image for this
turn only (`ctx.images`); the session keeps the message's text and the model's answer, never
the bytes. A document's text is read, filed in the memory of the turn's scope, and the reply
says what was read; the model is asked only when a caption came with it, and then answers
from the start of the text (`ctx.shared_document`). Whatever cannot be read gets a clear
message and nothing is stored. Filing counts against the sender's daily budget, and a
sender at the budget has no document read (`bot/usage/meter.py`).
"""

from __future__ import annotations

import logging

from bot.conversation import ChatMessage, IncomingFile
from bot.i18n.catalogue import media as texts
from bot.media.kinds import file_kind, quoted_name, refusal_before_reading
from bot.media.library import DocumentLibrary
from bot.media.model import ExtractedText, FileKind, UnreadableFile
from bot.pipeline.context import TurnContext
from bot.ports.llm import ImageInput
from bot.ports.media import MediaReaderPort
from bot.usage.meter import UsageMeter

log = logging.getLogger(__name__)

EXCERPT_CHARS = 12_000
"""Of a document sent with a question, this much text goes into the turn's prompt (about
3,000 tokens); the model finds the rest through memory in later turns."""


class AttachmentSystem:
    """Reads `ctx.message.file`: sets `ctx.images` for the model; or files a document and
    sets the reply as `ctx.notice` (so the model is not asked and the exchange not stored),
    or, with a caption, sends that reply at once and leaves the caption to the model."""

    name = "Attachments"
    order = 10

    def __init__(
        self, reader: MediaReaderPort, library: DocumentLibrary, meter: UsageMeter | None = None
    ) -> None:
        """`meter`: counts filed documents against their sender (None: not counted)."""
        self._reader = reader
        self._library = library
        self._meter = meter

    def should_process(self, ctx: TurnContext) -> bool:
        return ctx.message.file is not None

    async def process(self, ctx: TurnContext) -> None:
        attachment = ctx.message.file
        assert attachment is not None
        kind = file_kind(attachment.file_name, attachment.mime_type)
        refusal = refusal_before_reading(attachment, ctx.config)
        try:
            if refusal is not None:
                ctx.notice = refusal
            elif kind is FileKind.IMAGE:
                await self._image(ctx, attachment)
            elif kind is not None:
                await self._document(ctx, attachment, kind)
        except UnreadableFile as exc:
            log.info("[Media] could not read a %s: %s", kind or "file", exc)
            ctx.notice = texts.nothing_stored(str(exc))

    async def _image(self, ctx: TurnContext, attachment: IncomingFile) -> None:
        image = await self._reader.prepare_image(attachment.data, ctx.config.media, ctx.user_id)
        log.info("[Media] image of %dx%d for the model", image.width, image.height)
        ctx.images = [ImageInput(image.data, image.mime_type)]

    async def _document(self, ctx: TurnContext, attachment: IncomingFile, kind: FileKind) -> None:
        name = quoted_name(attachment.file_name)
        if self._meter is not None and (refusal := await self._meter.refusal(ctx.user_id)):
            ctx.notice = refusal
            return
        found = await self._reader.read_document(
            attachment.data, kind, ctx.config.media, ctx.user_id
        )
        if not found.text:
            ctx.notice = (
                texts.no_text_in_pdf(name, found.pages or 0)
                if kind is FileKind.PDF
                else texts.empty_file(name)
            )
            return
        said = await self._keep(ctx, attachment, kind, found)
        caption = attachment.caption_in(ctx.user_text)
        if not caption:
            ctx.notice = said
            ctx.turn_messages = [ChatMessage.assistant(said)]
            return
        # A question came with it: say what was read, then let the model answer from the text.
        await ctx.channel.send(ctx.message.address, said)
        excerpt = found.text[:EXCERPT_CHARS]
        more = " (its beginning; the rest is in memory)" if excerpt != found.text else ""
        ctx.shared_document = f"{name}, {describe(found)}{more}:\n{excerpt}"

    async def _keep(
        self, ctx: TurnContext, attachment: IncomingFile, kind: FileKind, found: ExtractedText
    ) -> str:
        """File the text in the scope's memory when it may be kept: short-term memory (the
        default) and long-term memory (LightRAG, when on); what to tell the sender."""
        name, summary = quoted_name(attachment.file_name), describe(found)
        if not ctx.remembering:
            return texts.read_not_remembering(name, _size(found))
        short_term, long_term = ctx.config.memory.enabled, ctx.config.rag.enabled
        if not short_term and not long_term:
            return texts.read_memory_off(name, _size(found))
        scope, at = ctx.memory_scope, ctx.message.received_at
        if long_term:
            await self._library.file(scope, ctx.session.key, attachment.file_name, found.text, at)
            if self._meter is not None:
                self._meter.indexed(ctx.user_id, len(found.text))
        source = f"turn:{ctx.session.key}:{at:%Y%m%dT%H%M%S%f}"
        kept = (
            await self._library.keep(scope, kind, at, summary, source, found.text)
            if short_term
            else None
        )
        if kept is None or not kept.parts:
            if not long_term:
                return texts.could_not_keep(name, _size(found))
            return texts.filed(name, _size(found), _cut_note(found), scope.is_group)
        said = texts.kept(name, _size(found), _cut_note(found), scope.is_group, kept.note.id)
        if kept.cut_at is not None:
            said += texts.parts_cut(kept.cut_at, kept.parts)
        return said


def describe(found: ExtractedText) -> str:
    """What was read, for the note in memory and the model: `3 pages, 5,210 characters`."""
    chars = f"{len(found.text):,} character{'s' if len(found.text) != 1 else ''}"
    return chars if found.pages is None else f"{_pages(found.pages)}, {chars}"


def _pages(count: int) -> str:
    return f"{count} page{'s' if count != 1 else ''}"


def _size(found: ExtractedText) -> str:
    """`describe`, for the sender: in their language."""
    if found.pages is None:
        return texts.size_in_characters(len(found.text))
    return texts.size_in_pages(found.pages, len(found.text))


def _cut_note(found: ExtractedText) -> str:
    if found.truncated:
        return texts.rest_cut()
    if found.pages is not None and found.pages_read is not None and found.pages_read < found.pages:
        return texts.first_pages_read(found.pages_read)
    return ""
