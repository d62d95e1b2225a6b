"""The composition root and the `earshot` command: settings, models, MCP, ACP and print mode."""

__version__ = "0.1.0"
