"""Small protocols the pipeline depends on; adapters implement them."""
