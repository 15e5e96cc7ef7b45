"""What the rest of the bot needs of an MCP server's connection without the MCP SDK: its
state for `/status` and the back-off between tries. The SDK (and the web stack it brings,
~50 MB and half a second at start) is imported with `bot/mcp/connection.py`, only once a
server is configured (`mcp.servers`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.retry import Backoff

MCP_BACKOFF = Backoff(first_seconds=1.0, longest_seconds=300.0, jitter=0.2)
"""Rests between tries to start a server that failed or died: 1 s doubling to 5 min."""

Phase = Literal["starting", "ready", "restarting", "failed", "stopped"]


@dataclass(frozen=True)
class ServerState:
    """Where a server is, for `/status`: `problem` may name paths and hosts (operators only)."""

    phase: Phase
    tools: int = 0
    problem: str | None = None
    retry_in_seconds: float | None = None
