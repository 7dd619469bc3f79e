"""The registry's skills as an MCP server: Streamable HTTP on the app, and stdio (docs/mcp.md).

Core and domain-agnostic: tools are whatever the registry holds, for whoever is calling.
"""
