"""Undo: per-batch snapshots of the work tree in a git object store of earshot's own, shared by
every session in a project, and putting files back exactly where they were. See AGENTS.md."""
