"""The bot as the memory benchmarks build it: the repository's preferences copied into a
scratch folder, the embeddings provider chosen, no rate limit, an LLM script in place of a
model, and an optional clock the benchmark moves."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from pydantic import SecretStr

from bot.app import BotApp
from bot.conversation import utc_now
from bot.ports.llm import LlmPort
from bot.settings import Settings

REPO = Path(__file__).resolve().parent.parent


def eval_app(
    work: Path,
    llm: LlmPort,
    provider: str = "embedded",
    clock: Callable[[], datetime] = utc_now,
    rag: Mapping[str, object] | None = None,
    rag_api_key: str | None = None,
) -> BotApp:
    """A bot whose files live under `work`, with `memory.embeddings.provider` = `provider`;
    `rag`: settings merged into the `rag` section (LightRAG stays off without them)."""
    shutil.copytree(REPO / "preferences", work / "preferences", dirs_exist_ok=True)
    config_path = work / "preferences" / "runtime-config.json"
    config = json.loads(config_path.read_text())
    config["memory"]["embeddings"] = {"provider": provider}
    config["rateLimit"] = {"messagesPerMinute": 10_000}
    config["rag"].update(rag or {})
    config_path.write_text(json.dumps(config))
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        openai_base_url="http://127.0.0.1:9/v1",
        data_dir=work / "data",
        runtime_config_path=config_path,
        prompts_dir=work / "preferences" / "prompts",
        rag_api_key=SecretStr(rag_api_key) if rag_api_key else None,
    )
    return BotApp.build(settings, llm=llm, clock=clock)
