"""The media worker run in this process: for tests of what a turn does with a file."""

from __future__ import annotations

import json

from bot.i18n import Language, speaking
from bot.media.worker import answer_to


class InProcessWorker:
    """Stands in for `MediaReader`'s child process: the same `answer_to` on the same job, in
    this process, without the child's start-up (a Python with pypdf and Pillow, ~0.3 s a
    file). The child itself is tested where isolation is the point (`test_i18n_choice.py`,
    `bench/media_reading.py`, the e2e tests)."""

    limit_seconds = 60.0

    async def run_bytes(
        self, data: bytes, args: list[str] | None = None, limit_seconds: float | None = None
    ) -> bytes:
        job = json.loads((args or ["{}"])[0])
        with speaking(Language(job["language"])):
            return json.dumps(answer_to(job, data)).encode("utf-8")
