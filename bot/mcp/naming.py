"""Tool names the model sees: `<server>__<tool>`, valid for OpenAI (`^[a-zA-Z0-9_-]{1,64}$`)."""

from __future__ import annotations

import re

SEPARATOR = "__"
MAX_NAME = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def namespaced(server: str, tool: str) -> str:
    """`server__tool`, other characters replaced by `_` and cut to 64; the server name (at
    most 30 characters, checked by the config) always survives, so servers never collide."""
    return f"{server}{SEPARATOR}{_INVALID.sub('_', tool)}"[:MAX_NAME]
