"""Token usage per user per day, and `MeteredLlm`, through which every LLM call is counted."""
