"""One turn: the loop (shape context, stream the model, gate and run its tool calls, record the
results, repeat), the calls checked and executed, hooks, the prompts on their way in, and what the
transcript keeps of each call. See AGENTS.md."""
