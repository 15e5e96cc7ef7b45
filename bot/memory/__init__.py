"""Short-term structured memory: items, extraction, retrieval, packing (docs/MEMORY.md)."""
