"""Embedding adapters: the model shipped inside a wheel, and any OpenAI-compatible server."""
