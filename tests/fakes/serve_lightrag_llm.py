"""Run LightRAG's deterministic fake LLM as its own process (so it shares no GIL with tests).

python -m tests.fakes.serve_lightrag_llm PORT
"""

from __future__ import annotations

import signal
import sys
import threading

from tests.fakes.lightrag_llm import lightrag_responder
from tests.fakes.openai_server import FakeOpenAiServer


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = FakeOpenAiServer(responder=lightrag_responder, port=port)
    server.start()
    print(server.base_url, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop()


if __name__ == "__main__":
    main()
