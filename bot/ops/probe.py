"""`python -m bot.ops.probe [healthz|readyz]`: ask the running bot's listener, exit 0 or 1.

For a container's HEALTHCHECK, where no curl is installed: it reads HTTP_PORT (and
HTTP_LISTEN; 0.0.0.0 is asked at 127.0.0.1) from the environment and prints one line.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 5.0
MAX_BODY_BYTES = 64 * 1024


def probe(path: str, port: int, host: str = "127.0.0.1") -> tuple[bool, str]:
    """Whether `/<path>` answered 200, and the start of what it said."""
    url = f"http://{host}:{port}/{path}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return True, response.read(MAX_BODY_BYTES).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}: {exc.read(MAX_BODY_BYTES).decode(errors='replace')}"
    except (OSError, ValueError) as exc:
        return False, f"no answer from {url}: {exc}"


def main(argv: list[str]) -> int:
    path = argv[0] if argv else "readyz"
    if path not in ("healthz", "readyz"):
        print("usage: python -m bot.ops.probe [healthz|readyz]", file=sys.stderr)
        return 2
    port = os.environ.get("HTTP_PORT", "")
    if not port.isdigit():
        print("HTTP_PORT is not set: the bot serves no probes", file=sys.stderr)
        return 1
    host = os.environ.get("HTTP_LISTEN", "127.0.0.1")
    ok, said = probe(path, int(port), "127.0.0.1" if host in ("0.0.0.0", "::", "") else host)
    print(said.strip()[:500])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
