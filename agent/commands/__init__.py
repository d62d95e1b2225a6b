"""Slash commands: the built-in ones, /rewind and /fork, the user's Markdown commands, and the
sources the composition root adds (MCP prompts). See AGENTS.md."""
