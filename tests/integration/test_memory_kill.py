"""`kill -9` of a process writing memory leaves every memory file whole and readable."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.model import MemoryItem

REPO = Path(__file__).resolve().parents[2]
WRITER = """
import asyncio, sys
from pathlib import Path
from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory

async def main():
    memory = file_memory(Path(sys.argv[1]), MemoryConfig)
    n = 0
    while True:
        n += 1
        await asyncio.gather(*(
            memory.remember_exchange(
                user, f"My project {n} is called Orion-{n}. Explain the plan for it in detail.",
                "Here is a long plan: " + "step " * 60, f"turn:{n}")
            for user in ("ada", "bob")
        ))

asyncio.run(main())
"""


def test_every_memory_file_parses_after_kill_9(tmp_path):
    root = tmp_path / "memory"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)], cwd=REPO, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list(root.rglob("*.jsonl"))) < 4:
        time.sleep(0.05)
    time.sleep(0.3)  # mid-stream: appends and promotions are running
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(10)
    files = list(root.rglob("*.jsonl"))
    assert len(files) >= 4, writer.stderr.read().decode()[-2000:] if writer.stderr else ""
    for path in files:
        raw = path.read_bytes()
        assert raw.endswith(b"\n"), f"{path} ends mid-line"
        for line in raw.splitlines():
            MemoryItem.model_validate(json.loads(line))
    reopened = file_memory(root, MemoryConfig)
    assert asyncio.run(reopened.count_for("ada")) > 0
    assert asyncio.run(reopened.count_for("bob")) > 0
    assert not list(root.rglob("*.damaged"))
