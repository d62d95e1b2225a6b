"""The append-only JSONL session tree: transcripts that never lose a word."""
