"""Turn-loop overhead benchmarks; writes the `## loop` section of bench/RESULTS.md.

Run from the repo root as a module (a script run would put `bench/` first on sys.path, where
`bench/sessions.py` shadows the `sessions` package): `.venv/bin/python -m bench.loop` (add
`--no-write` to only print).

Targets:
- per streamed text delta, the loop's own cost (a scripted model emitting 100,000 deltas, the
  consumer draining `run_turn`) minus draining the model's stream directly: <= 10 us;
- per tool call, excluding the tool's own work (a no-op read-only tool): <= 1 ms.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from pydantic import BaseModel

from agent.backends import ToolUi
from agent.session import AgentSession, SessionOptions, create_session
from agent.tools import AnyTool, ToolContext, ToolOutput, define_tool
from bench.results_md import write_section
from providers.types import ModelRequest, StreamEvent
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn, TurnSpec
from sessions import SessionStore

SECTION = "## loop"
DELTAS = 100_000
CALLS_PER_MESSAGE = 1_000
SINGLE_CALL_BATCHES = 200
RUNS = 5


class _NoInput(BaseModel):
    pass


async def _noop(args: _NoInput, ctx: ToolContext) -> ToolOutput:
    return ToolOutput.text("ok")


NOOP: AnyTool = define_tool(
    name="noop",
    description="does nothing",
    input_model=_NoInput,
    execute=_noop,
    ui=lambda args, ctx: ToolUi(title="noop"),
    read_only=True,
)


class _YieldingModel(ScriptedModel):
    """Gives way to the event loop before every event, as a network stream does: the consumer
    then runs between deltas instead of draining a backlog."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            await anyio.lowlevel.checkpoint()
            yield event


async def _session(
    root: Path, turns: list[TurnSpec], *, yielding: bool = False
) -> tuple[AgentSession, ScriptedModel]:
    model = _YieldingModel(turns) if yielding else ScriptedModel(turns)
    cwd = root / "project"
    cwd.mkdir(parents=True, exist_ok=True)
    session = await create_session(
        store=SessionStore(root / "sessions"),
        cwd=cwd,
        options=SessionOptions(
            model_name="scripted/bench",
            extra_tools=[NOOP],
            builtin_tools=False,
            max_turns=10_000,
        ),
        model_factory=lambda name: model,
        data_dir=root / "data",
    )
    return session, model


async def _drain_turn(session: AgentSession, prompt: str) -> tuple[float, int]:
    count = 0
    start = time.perf_counter()
    async for _ in session.run_turn(prompt):
        count += 1
    return time.perf_counter() - start, count


async def _drain_model(turn: ScriptedTurn, *, yielding: bool = False) -> float:
    model = _YieldingModel([turn]) if yielding else ScriptedModel([turn])
    request = ModelRequest(system="", messages=[])
    start = time.perf_counter()
    async for _ in model.stream(request):
        pass
    return time.perf_counter() - start


async def bench_deltas(root: Path, *, yielding: bool) -> dict[str, float]:
    text = "x" * DELTAS
    loop_runs: list[float] = []
    bare_runs: list[float] = []
    for run in range(RUNS):
        turn = ScriptedTurn(text=text, chunk_size=1)
        bare_runs.append(await _drain_model(turn, yielding=yielding))
        session, _ = await _session(root / f"deltas{run}-{yielding}", [turn], yielding=yielding)
        elapsed, count = await _drain_turn(session, "go")
        assert count >= DELTAS
        loop_runs.append(elapsed)
        await session.aclose()
    loop = statistics.median(loop_runs) / DELTAS * 1e6
    bare = statistics.median(bare_runs) / DELTAS * 1e6
    return {"with loop": loop, "model alone": bare, "loop overhead": loop - bare}


async def _calls_turn_time(root: Path, turns: list[TurnSpec]) -> float:
    session, _ = await _session(root, turns)
    elapsed, _ = await _drain_turn(session, "go")
    await session.aclose()
    return elapsed


async def bench_tool_calls(root: Path) -> dict[str, float]:
    wide: list[float] = []
    narrow: list[float] = []
    for run in range(RUNS):
        calls = [ScriptedCall(name="noop", arguments={}) for _ in range(CALLS_PER_MESSAGE)]
        with_calls = await _calls_turn_time(
            root / f"wide{run}", [ScriptedTurn(tool_calls=calls), ScriptedTurn(text="done")]
        )
        without = await _calls_turn_time(
            root / f"wide-base{run}", [ScriptedTurn(text="a"), ScriptedTurn(text="done")]
        )
        wide.append((with_calls - without) / CALLS_PER_MESSAGE)

        single = [
            ScriptedTurn(tool_calls=[ScriptedCall(name="noop", arguments={})])
            for _ in range(SINGLE_CALL_BATCHES)
        ]
        plain: list[TurnSpec] = [ScriptedTurn(text="a") for _ in range(SINGLE_CALL_BATCHES)]
        # The same number of model calls, with and without one tool call each: the difference
        # is the tool call (validation, gate, events, and its tool message appended and synced).
        with_one = await _calls_turn_time(
            root / f"narrow{run}", [*single, ScriptedTurn(text="done")]
        )
        without_one = await _turns_time(root / f"narrow-base{run}", plain)
        narrow.append((with_one - without_one) / SINGLE_CALL_BATCHES)
    return {
        f"{CALLS_PER_MESSAGE} calls in one message": statistics.median(wide) * 1e3,
        f"{SINGLE_CALL_BATCHES} messages of one call": statistics.median(narrow) * 1e3,
    }


async def _turns_time(root: Path, turns: list[TurnSpec]) -> float:
    """`len(turns)` model calls without tools: one run_turn per text turn."""
    session, _ = await _session(root, turns)
    start = time.perf_counter()
    for index in range(len(turns)):
        async for _ in session.run_turn(f"go {index}"):
            pass
    elapsed = time.perf_counter() - start
    await session.aclose()
    # Each of those turns also appended and synced a prompt (the tool run does not): remove it.
    prompt_cost = await _prompt_append_cost(root / "prompts", len(turns))
    return elapsed - prompt_cost


async def _prompt_append_cost(root: Path, count: int) -> float:
    from providers.types import Message, TextPart

    store = SessionStore(root)
    stored = await store.create(root)
    start = time.perf_counter()
    for index in range(count):
        await stored.append_message(Message(role="user", parts=[TextPart(text=f"go {index}")]))
    elapsed = time.perf_counter() - start
    await stored.aclose()
    return elapsed


async def bench(root: Path) -> dict[str, str]:
    results: dict[str, str] = {}
    for yielding, label in ((False, "burst"), (True, "yielding")):
        deltas = await bench_deltas(root, yielding=yielding)
        results[f"per text delta ({label}), through run_turn"] = f"{deltas['with loop']:.2f} us"
        results[f"per text delta ({label}), model alone"] = f"{deltas['model alone']:.2f} us"
        results[f"per text delta ({label}), loop overhead (target <= 10 us)"] = (
            f"{deltas['loop overhead']:.2f} us"
        )
    calls = await bench_tool_calls(root)
    for name, value in calls.items():
        results[f"per tool call, {name} (target <= 1 ms)"] = f"{value:.3f} ms"
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        results = anyio.run(bench, Path(directory))
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python -m bench.loop` on {machine}; medians of {RUNS} runs, sessions on the temp",
            "dir's disk (every append is fsynced); 1-minute load average "
            f"{os.getloadavg()[0]:.1f} at the end",
            "(the machine is shared, and a sync waits on its disk). Overheads are differences",
            "against the same work without the measured thing: draining the scripted model's",
            "stream directly for deltas; the same model calls without tool calls for tool calls.",
            "Each result is appended and synced as its call finishes, before the call is shown",
            "finished: results that finish together share one append (the 1000 concurrent",
            "read-only calls), a lone call pays its own sync. Deltas: 100,000",
            'one-character deltas; "burst" = the model never awaits (the consumer drains a',
            'backlog), "yielding" = a checkpoint before every event, as on a network stream (the',
            "consumer wakes once per delta).",
            "",
            "| measure | result |",
            "|---|---|",
            *(f"| {name} | {value} |" for name, value in results.items()),
        ]
    )
    print(body)
    if "--no-write" not in sys.argv:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
