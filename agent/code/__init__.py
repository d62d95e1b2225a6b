"""What earshot knows of the user's code beyond its files: the session's code index (opened lazily,
refreshed in the background), edits that check themselves (language-server diagnostics, the verify
loop), and the worker loop they run on. See AGENTS.md."""
