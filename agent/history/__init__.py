"""A session's stored history: its JSONL transcript, replayed as the events a live run would have
produced, its branches (rewind and fork), and the undo batches it recorded. See AGENTS.md."""
