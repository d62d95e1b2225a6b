"""What the model is sent, derived from the history without rewriting it: capped and pruned tool
results, compaction, token estimates, the prompt cache's economics, usage, and the built-in system
prompt. See AGENTS.md."""
