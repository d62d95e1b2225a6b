"""The settings files: their schema, the scopes read and merged (user, project, local, remembered),
the edits earshot makes to them, and the workspace trust that decides what a repository's own files
may do. See AGENTS.md."""
