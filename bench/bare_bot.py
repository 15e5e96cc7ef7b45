"""A bare python-telegram-bot bot: the baseline `bench.telegram_concurrency` holds ours against.

Per text message it makes one OpenAI chat call with the message alone and sends the answer
with one `sendMessage`: no allowlist, session, memory, journal, typing indicator or drafts.
PTB's own `Updater` long-polls, and `concurrent_updates` runs up to 256 updates at once, as a
bare bot that wants chats answered in parallel is written (PTB's documented way).

Two choices keep the comparison about what our bot adds, not about how it talks:

- The OpenAI call streams (`stream=True`) and the joined text is sent once. Our bot streams
  with its default config, so both read the same SSE answer from the same server and parse it
  with the same SDK; what differs is only the bot around the call.
- Both Bot API and OpenAI requests go over aiohttp, as ours do (`bot/adapters/telegram/
  http_transport.py`, `DefaultAioHttpClient`). The libraries' httpx defaults cost more CPU per
  request under load, which would flatter our bot; `--library-transports` uses them anyway.

    TELEGRAM_BOT_TOKEN=... TELEGRAM_API_URL=http://127.0.0.1:PORT OPENAI_BASE_URL=... \\
        python -m bench.bare_bot [--no-stream] [--library-transports]
"""

from __future__ import annotations

import argparse
import os

from openai import AsyncOpenAI, DefaultAioHttpClient
from openai.types.chat import ChatCompletionMessageParam
from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

from bot.adapters.telegram.http_transport import AiohttpRequest

CONCURRENT_UPDATES = 256
"""PTB's own figure for `concurrent_updates(True)`."""


def build(stream: bool, library_transports: bool) -> Application:
    api_url = os.environ["TELEGRAM_API_URL"]
    llm = AsyncOpenAI(
        api_key="not-needed",
        base_url=os.environ["OPENAI_BASE_URL"],
        max_retries=0,
        http_client=None if library_transports else DefaultAioHttpClient(),
    )
    builder = (
        Application.builder()
        .token(os.environ["TELEGRAM_BOT_TOKEN"])
        .base_url(f"{api_url}/bot")
        .concurrent_updates(CONCURRENT_UPDATES)
        .post_shutdown(lambda _: llm.close())
    )
    if not library_transports:
        builder = builder.request(AiohttpRequest(connection_pool_size=CONCURRENT_UPDATES))
        builder = builder.get_updates_request(AiohttpRequest(connection_pool_size=1))
    application = builder.build()

    async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        assert message is not None and message.text is not None
        asked: list[ChatCompletionMessageParam] = [{"role": "user", "content": message.text}]
        if stream:
            chunks = await llm.chat.completions.create(
                model="gpt-4o-mini", messages=asked, stream=True
            )
            text = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
        else:
            completion = await llm.chat.completions.create(model="gpt-4o-mini", messages=asked)
            text = completion.choices[0].message.content or ""
        await context.bot.send_message(chat_id=message.chat_id, text=text)

    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, answer))
    return application


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-stream", action="store_true", help="one non-streaming call")
    parser.add_argument(
        "--library-transports", action="store_true", help="PTB's and openai's httpx defaults"
    )
    args = parser.parse_args()
    application = build(stream=not args.no_stream, library_transports=args.library_transports)
    application.run_polling(allowed_updates=[Update.MESSAGE])


if __name__ == "__main__":
    main()
