"""The composition root and the `earshot` command: settings, models, MCP tools, ACP and print mode."""

__version__ = "0.1.0"
