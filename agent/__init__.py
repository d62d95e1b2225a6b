"""The agent core: sessions, the turn loop, tools, permissions, context shaping, undo and hooks."""
