"""The local machine: the file and process backends a session uses when no editor provides its own,
background commands, and the reaper that ends a background command's processes. See AGENTS.md."""
