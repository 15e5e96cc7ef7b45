"""The MCP client: tools from the MCP servers listed in the runtime config (`mcp.servers`)."""

from bot.mcp.offer import McpTool
from bot.mcp.servers import McpServers

__all__ = ["McpServers", "McpTool"]
