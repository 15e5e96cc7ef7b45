"""An MCP tool result as the text the model reads.

Text blocks are passed on; an embedded text resource is passed on under its URI; structured
content is passed on as JSON when the server sent no text. Images, audio and binary resources
are not sent to the model (a tool result in the chat API is text): a one-line note says what
was left out, so the model can tell the user. The registry then truncates the whole text
like any tool's (`llm.toolOutputMaxChars`).
"""

from __future__ import annotations

import json

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)


def result_text(result: CallToolResult) -> str:
    """The model's view of `result`; `Error: ` first when the tool reported a failure."""
    parts = [_block_text(block) for block in result.content]
    if not any(isinstance(block, TextContent) for block in result.content):
        if result.structured_content is not None:
            parts.insert(0, json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n\n".join(part for part in parts if part) or "(the tool returned nothing)"
    return f"Error: {text}" if result.is_error else text


def _block_text(block: object) -> str:
    match block:
        case TextContent():
            return block.text
        case ImageContent() | AudioContent():
            kind = "image" if isinstance(block, ImageContent) else "audio"
            return f"[{kind} ({block.mime_type}, {_size(block.data)}) not shown: tools return text]"
        case EmbeddedResource(resource=TextResourceContents() as text):
            return f"[resource {text.uri}]\n{text.text}"
        case EmbeddedResource(resource=BlobResourceContents() as blob):
            mime = blob.mime_type or "binary"
            return f"[resource {blob.uri} ({mime}, {_size(blob.blob)}) not shown]"
        case ResourceLink():
            return f"[resource link: {block.name} {block.uri}]"
    return ""


def _size(base64_data: str) -> str:
    kilobytes = len(base64_data) * 3 // 4 / 1024
    return f"{kilobytes:.0f} KB" if kilobytes >= 1 else "under 1 KB"
