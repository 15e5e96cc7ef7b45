"""Adapters: the outside world (LLM API, terminal, Telegram, LightRAG) behind the ports."""
