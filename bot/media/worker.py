"""The child process that reads one file: `python -I bot/media/worker.py '<job JSON>'`.

The file's bytes come on stdin; one JSON object goes to stdout: the result, or
`{"error": "<message for the sender>"}`. The address space and the CPU time are capped
first, so a decompression bomb or a file that costs minutes of work ends this process, not
the bot. Started by `MediaReader`, which kills it
when its time is up.
"""

from __future__ import annotations

import base64
import json
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `-I` leaves the repo out

from bot.i18n import FALLBACK, Language, speaking
from bot.i18n.catalogue import media as texts
from bot.media.extraction import extract_text
from bot.media.images import downscale_image
from bot.media.model import FileKind, UnreadableFile


def run(job: dict[str, Any], data: bytes) -> dict[str, Any]:
    if job["task"] == "image":
        image = downscale_image(data, job["max_side"], job["max_pixels"])
        return {
            "data": base64.b64encode(image.data).decode("ascii"),
            "mime_type": image.mime_type,
            "width": image.width,
            "height": image.height,
        }
    found = extract_text(data, FileKind(job["kind"]), job["max_pages"], job["max_chars"])
    return {
        "text": found.text,
        "pages": found.pages,
        "pages_read": found.pages_read,
        "truncated": found.truncated,
    }


def main() -> None:
    job = json.loads(sys.argv[1])
    limit = job["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cpu = job["cpu_seconds"]  # past it the kernel sends SIGXCPU: the reader says "too costly"
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    data = sys.stdin.buffer.read()
    with speaking(Language(job.get("language", FALLBACK))):
        answer = answer_to(job, data)
    sys.stdout.write(json.dumps(answer))


def answer_to(job: dict[str, Any], data: bytes) -> dict[str, Any]:
    """The result, or the error in the sender's language."""
    try:
        return run(job, data)
    except UnreadableFile as exc:
        return {"error": str(exc)}
    except MemoryError:
        return {"error": texts.needs_more_memory()}
    except Exception as exc:  # a damaged file can break a library anywhere
        return {"error": texts.file_damaged(type(exc).__name__)}


if __name__ == "__main__":
    main()
