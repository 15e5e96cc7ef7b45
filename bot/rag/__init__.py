"""Long-term memory through LightRAG: documents, retrieval rendering, the durable index queue."""
