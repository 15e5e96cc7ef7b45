"""`python -m bot` / `memory-bot`: start the bot in Telegram or in the terminal."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bot import __version__
from bot.adapters.postgres.errors import DatabaseUnavailable
from bot.logging_setup import setup_logging
from bot.ops.errors import ListenFailed
from bot.runtime import apply_process_policies
from bot.settings import NO_LLM_MESSAGE, Settings, environment_with
from bot.storage.data_dir_lock import DataDirLock, DataDirRefused
from bot.storage.disk import START, DiskHealth

if TYPE_CHECKING:
    from bot.adapters.telegram import TelegramBot

EPILOG = """environment (or .env; see .env.example):
  OPENAI_API_KEY       key of the OpenAI-compatible API
  OPENAI_BASE_URL      its base URL; a local server (Ollama, vLLM, llama.cpp) needs no key
  TELEGRAM_BOT_TOKEN   from @BotFather; when set, the bot runs in Telegram
  TELEGRAM_API_URL     Bot API server (default https://api.telegram.org; or a self-hosted one)
  TELEGRAM_WEBHOOK_URL public URL for webhook mode (unset: long polling); with
                       TELEGRAM_WEBHOOK_LISTEN (127.0.0.1), TELEGRAM_WEBHOOK_PORT (8443)
                       and TELEGRAM_WEBHOOK_SECRET (random per run when unset)
  RAG_API_KEY          LightRAG server key (sent as X-API-Key)
  EMBEDDINGS_API_KEY   key of the embeddings server (memory.embeddings provider "openai"),
                       when not OPENAI_API_KEY
  SPEECH_API_KEY       key of the speech servers (voice notes), when not OPENAI_API_KEY
  HTTP_PORT            serve /healthz, /readyz and /metrics on this port (unset: off);
                       HTTP_LISTEN is its address (default 127.0.0.1)
  DATABASE_URL         PostgreSQL for sessions, usage, the Telegram inbox (several
                       processes on one token; postgresql://user:pw@host/db);
                       unset: files in the data dir (see docs/DEPLOYMENT.md)
  BOT_DATA_DIR         where sessions and memory live (default: data)
  BOT_RUNTIME_CONFIG   runtime config file (default: preferences/runtime-config.json)
  BOT_PROMPTS_DIR      prompt files (default: preferences/prompts)
  BOT_SKILLS_DIR       skills, one folder each (default: preferences/skills)
  LOG_LEVEL            DEBUG, INFO, WARNING or ERROR (default: INFO)
  any other NAME       read as ${NAME} in mcp.servers (e.g. SEARCH_TOKEN; docs/MCP.md)

Options given here win over the environment. Runtime config edits apply on the next message."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="A chat assistant with long-term memory, on any OpenAI-compatible LLM.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--channel",
        choices=("auto", "terminal", "telegram"),
        default="auto",
        help="telegram when TELEGRAM_BOT_TOKEN is set, else terminal (default: auto)",
    )
    parser.add_argument(
        "--env-file",
        type=Path,
        default=Path(".env"),
        metavar="PATH",
        help="file with environment variables (default: .env)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="runtime config file (overrides BOT_RUNTIME_CONFIG)",
    )
    parser.add_argument(
        "--data-dir", type=Path, metavar="PATH", help="data directory (overrides BOT_DATA_DIR)"
    )
    parser.add_argument(
        "--prompts-dir",
        type=Path,
        metavar="PATH",
        help="prompt files directory (overrides BOT_PROMPTS_DIR)",
    )
    parser.add_argument(
        "--skills-dir",
        type=Path,
        metavar="PATH",
        help="skills directory (overrides BOT_SKILLS_DIR)",
    )
    parser.add_argument("--log-level", metavar="LEVEL", help="overrides LOG_LEVEL")
    parser.add_argument(
        "--log-file",
        type=Path,
        metavar="PATH",
        help="write logs here (terminal chat default: <data dir>/bot.log)",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser.parse_args(argv)


def load_settings(args: argparse.Namespace) -> Settings:
    overrides = {
        "runtime_config_path": args.config,
        "data_dir": args.data_dir,
        "prompts_dir": args.prompts_dir,
        "skills_dir": args.skills_dir,
        "log_level": args.log_level,
    }
    return Settings(
        _env_file=args.env_file,
        **{name: value for name, value in overrides.items() if value is not None},
    )


def describe_invalid_settings(exc: ValidationError) -> str:
    """One line naming each bad variable and the problem, never the value (it may be a secret)."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        name = str(error["loc"][0]).upper() if error["loc"] else "(settings)"
        problems.append(f"{name}: {error['msg']}")
    return "; ".join(problems)


def main(argv: list[str] | None = None) -> int:
    # A second line behind the private modes the storage code gives each file and folder:
    # nothing this process creates is readable by other local users.
    os.umask(0o077)
    args = parse_args(argv)
    try:
        settings = load_settings(args)
    except ValidationError as exc:
        print(f"Invalid setting: {describe_invalid_settings(exc)}", file=sys.stderr)
        return 2
    if not settings.llm_configured:
        print(NO_LLM_MESSAGE, file=sys.stderr)
        return 2
    channel = args.channel
    if channel == "auto":
        channel = "telegram" if settings.telegram_bot_token else "terminal"
    if channel == "telegram" and settings.telegram_bot_token is None:
        print("The Telegram channel needs TELEGRAM_BOT_TOKEN (from @BotFather).", file=sys.stderr)
        return 2

    log_file = args.log_file or (settings.data_dir / "bot.log" if channel == "terminal" else None)
    # With PostgreSQL, several processes may serve one bot from one data dir (`DataDirLock`).
    lock = DataDirLock(settings.data_dir, shared=settings.database_url is not None)
    try:
        lock.acquire()
    except DataDirRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    setup_logging(settings.log_level, settings.secret_values(), log_file)
    apply_process_policies()
    disk = DiskHealth()
    if lock.write_error is not None:  # one line, not a traceback: a supervisor would loop
        disk.failed(START, lock.write_error, "starting anyway (see /status)")
    try:
        return asyncio.run(run(settings, channel, disk, environment_with(args.env_file)))
    except KeyboardInterrupt:
        return 0
    finally:
        lock.release()


async def run(
    settings: Settings,
    channel: str,
    disk: DiskHealth | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    telegram = None
    if channel == "telegram":
        from bot.adapters.telegram import TelegramOptions

        telegram = TelegramOptions.from_settings(settings)
    from bot.app import BotApp  # after `apply_process_policies`: numpy reads its setting then

    app = BotApp.build(settings, disk=disk, telegram=telegram, environ=environ)
    try:
        try:
            await app.start()
        except (ListenFailed, DatabaseUnavailable) as exc:  # one line, not a traceback
            print(exc, file=sys.stderr)
            return 2
        if app.telegram is not None:
            return await run_telegram(app.telegram)
        from bot.adapters.terminal import TerminalChannel, locale_language

        terminal = TerminalChannel(language_code=locale_language())
        terminal.register_commands(app.commands)
        app.reminders.deliver_through(terminal)
        await terminal.run(lambda message: app.handle(message, terminal))
        return 0
    finally:
        await app.aclose()


async def run_telegram(bot: TelegramBot) -> int:
    from bot.adapters.telegram import StartupFailed

    try:
        await bot.run_until_signalled()
    except StartupFailed as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
