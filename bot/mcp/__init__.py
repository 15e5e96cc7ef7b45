"""The MCP client: tools from the MCP servers listed in the runtime config (`mcp.servers`)."""

from bot.mcp.servers import McpServers, McpTool

__all__ = ["McpServers", "McpTool"]
