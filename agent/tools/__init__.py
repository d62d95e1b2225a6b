"""The tools the model calls: one module each, `builtin` lists them, `base` says what a tool is."""
