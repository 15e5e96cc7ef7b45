"""A feature that is off costs the process nothing: the libraries of PDF and Word files,
audio, MCP, PostgreSQL and Prometheus are imported when first used, not when the bot is
built. Each is checked in a fresh interpreter, where `sys.modules` shows what the build
pulled in (this test process has imported most of them already)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

OPTIONAL = {
    "pypdf": "PDF files",
    "docx": "Word files",
    "av": "audio (voice notes)",
    "mcp": "MCP servers",
    "mcp_types": "MCP servers",
    "psycopg": "PostgreSQL",
    "psycopg_pool": "PostgreSQL",
    "prometheus_client": "metrics (HTTP_PORT)",
}

BUILD_FOR_TELEGRAM = """
import json, sys
from bot.__main__ import load_settings, parse_args
from bot.adapters.telegram import TelegramOptions
from bot.app import BotApp

args = parse_args(["--data-dir", sys.argv[1], "--env-file", "/dev/null"])
settings = load_settings(args)
app = BotApp.build(settings, telegram=TelegramOptions.from_settings(settings))
assert app.telegram is not None and app.ops is None
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def imported_by(code: str, *argv: str, env: dict[str, str] | None = None) -> set[str]:
    """The top-level packages a fresh interpreter holds after running `code`."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def bot_environment() -> dict[str, str]:
    """What `python -m bot` reads for Telegram on files, and nothing of the shell's own."""
    keep = ("PATH", "HOME", "LANG", "SYSTEMROOT")
    env = {name: value for name, value in os.environ.items() if name in keep}
    env.update(
        TELEGRAM_BOT_TOKEN="123:fake",
        TELEGRAM_API_URL="http://127.0.0.1:9/bot",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
    )
    return env


def test_importing_the_entry_point_loads_no_optional_library():
    code = """
    import json, sys
    import bot.__main__, bot.app, bot.wiring, bot.stores
    print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
    """
    loaded = imported_by(code) & set(OPTIONAL)
    assert not loaded, {name: OPTIONAL[name] for name in loaded}


def test_the_bot_built_for_telegram_on_files_loads_no_optional_library(tmp_path):
    loaded = imported_by(BUILD_FOR_TELEGRAM, str(tmp_path), env=bot_environment())
    assert not loaded & set(OPTIONAL), {name: OPTIONAL[name] for name in loaded & set(OPTIONAL)}
    assert {"telegram", "openai"} <= loaded  # the build did run: the channel and the LLM are in


def test_a_feature_turned_on_loads_its_library_when_built(tmp_path):
    env = bot_environment() | {"HTTP_PORT": "9"}  # built, never started: no port is opened
    code = BUILD_FOR_TELEGRAM.replace("app.ops is None", "app.ops is not None")
    loaded = imported_by(code, str(tmp_path), env=env)
    assert "prometheus_client" in loaded


def test_the_entry_point_imports_numpy_only_after_the_process_policies():
    # numpy reads NUMPY_MADVISE_HUGEPAGE when imported (`bot/runtime.py`, `small_memory`).
    code = """
    import json, sys
    import bot.__main__
    print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
    """
    assert "numpy" not in imported_by(code)


def test_long_polling_loads_no_web_server(tmp_path):
    """aiohttp's server is for the webhook and the health endpoint, both off here (1.8 MB)."""
    code = BUILD_FOR_TELEGRAM.replace('{name.split(".")[0] for name in sys.modules}', "sys.modules")
    loaded = imported_by(code, str(tmp_path), env=bot_environment())
    assert "aiohttp" in loaded, "its client carries the Bot API calls"
    assert not {"aiohttp.web", "bot.adapters.telegram.webhook"} & loaded
