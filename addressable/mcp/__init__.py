"""MCP: `addressable mcp serve` (the toolkit as an MCP server) and `addressable mcp proxy`
(any MCP server's results made addressable). Only the modules here import the `mcp` SDK;
without the extra they raise `MissingDependency` naming it."""
