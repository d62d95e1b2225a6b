"""`earshot eval`: run a task set through print mode and measure what the agent did.

A task is a small repository snapshot, a prompt and a check command (`tasks.py`). Each runs in a
fresh copy in a temporary directory, through the real CLI (`earshot -p` as a subprocess) in the
permission mode the task chooses; the check then runs in the command sandbox (`runner.py`). The
results (pass rate, turns, tokens, cost, time per task) come from print mode's `result` line and
are reported as a table or JSON (`report.py`). Tasks run in parallel locally (`--jobs N`) or fan
out over a Ray cluster (`--ray ADDRESS`, `ray_backend.py`: an optional extra).

With `--scripted NAME` each task plays its own `NAME.json` scripted-model file instead of a real
model: the shipped tasks carry a `solution.json` that passes and a `wrong.json` that must fail,
so the harness itself is tested offline.
"""
