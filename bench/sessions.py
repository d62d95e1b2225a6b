"""Session store benchmarks; writes the `## sessions` section of bench/RESULTS.md.

Run from the repo root as a module (a script run would put `bench/` first on sys.path, where
this file shadows the `sessions` package): `.venv/bin/python -m bench.sessions` (add `--no-write`
to only print).

Targets (from the sessions issue):
- resume: open a 10,000-entry session (~20 MB, realistic tool outputs) and build its request
  history in <= 250 ms;
- append: p50 <= 1 ms per entry (written and fdatasync'ed);
- list: 1,000 sessions in <= 200 ms.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from bench.results_md import write_section
from providers.types import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from sessions import SessionStore, TitleEntry

SECTION = "## sessions"

_WORDS = [
    "def",
    "return",
    "self",
    "import",
    "from",
    "if",
    "else",
    "for",
    "in",
    "while",
    "None",
    "True",
    "False",
    "value",
    "path",
    "result",
    "config",
    "session",
    "entry",
    "=",
    "==",
    "+",
    "-",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "'",
    '"',
    "#",
    "TODO",
    "error",
    "raise",
    "await",
    "async",
]


def _code(rng: random.Random, size: int) -> str:
    """Tool-output-like text: indented lines of code-ish words, quotes and braces included."""
    lines: list[str] = []
    total = 0
    while total < size:
        line = " " * rng.choice((0, 4, 8, 12)) + " ".join(rng.choices(_WORDS, k=rng.randint(3, 12)))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _turn(rng: random.Random, index: int) -> list[Message]:
    """A user prompt, then tool rounds: assistant reasoning + tool call, tool result."""
    messages = [Message(role="user", parts=[TextPart(text=_code(rng, 300))])]
    for round_ in range(4):
        call_id = f"call_{index}_{round_}"
        messages.append(
            Message(
                role="assistant",
                parts=[
                    ReasoningPart(
                        text=_code(rng, 400),
                        provider_metadata={"anthropic": {"signature": "s" * 344}},
                    ),
                    TextPart(text=_code(rng, 150)),
                    ToolCallPart(id=call_id, name="bash", arguments={"command": _code(rng, 80)}),
                ],
            )
        )
        messages.append(
            Message(
                role="tool",
                parts=[
                    ToolResultPart(
                        tool_call_id=call_id,
                        name="bash",
                        content=[TextPart(text=_code(rng, rng.randint(1_500, 4_000)))],
                    )
                ],
            )
        )
    return messages


def _timed(function: Callable[[], object], repeat: int) -> list[float]:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


async def bench(root: Path) -> dict[str, str]:
    rng = random.Random(7)
    store = SessionStore(root / "sessions")
    results: dict[str, str] = {}

    # --- append: p50 over 2,000 appends of the realistic mix, each written and synced.
    session = await store.create(root / "project")
    messages: list[Message] = []
    turn = 0
    while len(messages) < 10_000:
        messages.extend(_turn(rng, turn))
        turn += 1
    messages = messages[:10_000]
    append_times: list[float] = []
    for message in messages:
        start = time.perf_counter()
        await session.append_message(message)
        append_times.append(time.perf_counter() - start)
    await session.aclose()
    append_times.sort()
    results["append p50"] = f"{statistics.median(append_times) * 1e3:.3f} ms"
    results["append p90"] = f"{append_times[int(len(append_times) * 0.9)] * 1e3:.3f} ms"
    results["append p99"] = f"{append_times[int(len(append_times) * 0.99)] * 1e3:.3f} ms"

    # --- resume: open the 10,000-entry session and build its request history.
    size = session.path.stat().st_size
    resume_times: list[float] = []
    resume_cpu: list[float] = []
    history_length = 0
    for _ in range(7):
        start, start_cpu = time.perf_counter(), time.process_time()
        reopened = await store.open(session.id)
        history = reopened.history()
        resume_times.append(time.perf_counter() - start)
        resume_cpu.append(time.process_time() - start_cpu)
        history_length = len(history)
        await reopened.aclose()
        # Freeing a 10,000-entry session takes tens of ms; it belongs to closing, not resuming,
        # so it must not land inside the next iteration's timing when the name is rebound.
        del reopened, history
    assert history_length == 10_000
    results["resume file"] = f"{len(messages)} entries, {size / 1e6:.1f} MB"
    results["resume (open + history) median of 7"] = (
        f"{statistics.median(resume_times) * 1e3:.0f} ms"
        f" (min {min(resume_times) * 1e3:.0f}, max {max(resume_times) * 1e3:.0f})"
    )
    # CPU time of the process (the load runs in a worker thread; process_time counts it): what
    # the resume costs when the machine is not shared with other work.
    results["resume CPU time, median of 7"] = f"{statistics.median(resume_cpu) * 1e3:.0f} ms"

    # --- list: 1,000 sessions over 10 cwds, each with a title and a few entries.
    list_root = SessionStore(root / "listing")
    for index in range(1_000):
        listed = await list_root.create(root / f"project-{index % 10}")
        await listed.append_message(Message(role="user", parts=[TextPart(text="hello")]))
        await listed.append(TitleEntry(title=f"Session {index}"))
        await listed.aclose()
    everything: list[int] = []

    def list_all() -> None:
        page = list_root.list(limit=1_000)
        everything.append(len(page.items))

    all_times = _timed(list_all, 7)
    assert everything[-1] == 1_000
    first_page = _timed(lambda: list_root.list(), 7)
    one_cwd = _timed(lambda: list_root.list(root / "project-3"), 7)
    results["list 1,000 sessions (limit=1000) median of 7"] = (
        f"{statistics.median(all_times) * 1e3:.1f} ms"
    )
    results["list first page of 1,000 (limit=50)"] = f"{statistics.median(first_page) * 1e3:.1f} ms"
    results["list one cwd of 100 (limit=50)"] = f"{statistics.median(one_cwd) * 1e3:.1f} ms"
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        results = anyio.run(bench, Path(directory))
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python -m bench.sessions` on {machine}; 1-minute load average {load:.1f} at the",
            "end (the machine is shared and the resume time scales with its load). Files on the",
            "temp dir's disk (ext4); every append is written and fdatasync'ed before it returns.",
            "Targets: resume <= 250 ms, append p50 <= 1 ms, list 1,000 <= 200 ms.",
            "",
            "| measure | result |",
            "|---|---|",
            *(f"| {name} | {value} |" for name, value in results.items()),
            "",
            "Where the resume time goes, and what was done about it: one JSON parse per line",
            "with orjson (about three times faster than the stdlib's `json.loads`, which took",
            "~55% of the time before), then building the 10,000 messages with a direct",
            "dataclass decoder instead of the pydantic codec (60 ms against 150 ms; shapes it",
            "does not know exactly fall back to the codec). The cyclic GC is paused while",
            "parsing (collections mid-parse cost ~40%); the gen-0 collection it defers still",
            "runs inside the measured window. Opening also takes the session's writer lock",
            "and checks the leaf for calls left without results, and the request history",
            "joins each batch's tool messages (one per result) and answers any call without",
            "one (`sessions.repair`): about 10 ms together, measured against the same bench",
            "without them, run in turns on the same machine (248 against 258 ms, medians of",
            "three runs each). The time scales with the machine's load: see the load average",
            "above.",
        ]
    )
    print(body)
    if "--no-write" not in sys.argv:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
