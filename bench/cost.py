"""What a long session costs, wire by wire, against the best prompt caching allows; writes the
`## cost` section of bench/RESULTS.md.

Run from the repo root as a module: `.venv/bin/python -m bench.cost` (`--no-write` only prints,
`--turns N` changes the session's length, `--cache 1h` the TTL asked for).

One scripted session of 32 turns (tool results of realistic sizes: files of 2-12 kB read, grep
and glob output, a batch of a dozen reads at once; one automatic compaction) runs through the
real agent and the real vendor SDK of each wire (Anthropic Messages, OpenAI Chat Completions,
OpenAI Responses, Gemini) against a loopback fake that keeps a prompt cache by that vendor's
documented rules (`bench/cost_fakes.py`). For each wire it reports:

- the share of input tokens read from the cache;
- the share the best append-only agent could read: every request reads all of the previous
  one and pays only for what was appended since (the previous answer, its tool results, the
  new prompt), within the wire's rules (the minimum, 128-token steps); the first request reads
  nothing;
- their ratio (target >= 0.95);
- the session's cost at the catalog's prices for the model against that ideal's (target within
  1.1x), and without any caching; and that earshot's own count (the `usage_update` cost) agrees.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import anyio

from agent.context import CacheSetting
from agent.context.compaction import (
    SUMMARY_REQUEST_OPENING,
    SUMMARY_SYSTEM_PROMPT,
    is_summary_request,
)
from agent.events import CompactionFinished
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import Settings
from bench.cost_fakes import (
    CHARS_PER_TOKEN,
    PREFIX_MINIMUM_TOKENS,
    PREFIX_STEP_TOKENS,
    SEGMENTERS,
    WIRES,
    Call,
    FakeProvider,
    Reply,
    Wire,
    serving,
)
from bench.results_md import write_section
from providers.catalog import ModelCatalog, ModelInfo, ModelOverride, cost_usd
from providers.model import Endpoint, Model
from providers.types import Message, ModelRequest, StreamEvent, Usage
from providers.wire import anthropic_messages, gemini, openai_chat, openai_responses
from providers.wire.openai_chat_request import build_params as chat_params
from providers.wire.openai_responses import input_items as responses_input
from providers.wire.prompt_cache import minimum_cacheable_tokens
from sessions import SessionStore

SECTION = "## cost"
TURNS = 32
WINDOW = 150_000
"""The models' context window for the run: small enough for one automatic compaction."""


@dataclass(frozen=True)
class WireModel:
    provider: str
    model: str
    create: Callable[..., Model]


MODELS: dict[Wire, WireModel] = {
    "anthropic": WireModel("anthropic", "claude-sonnet-4-5", anthropic_messages.create_model),
    "openai-chat": WireModel("openai", "gpt-5.1", openai_chat.create_model),
    "openai-responses": WireModel("openai", "gpt-5.1", openai_responses.create_model),
    "gemini": WireModel("google", "gemini-2.5-pro", gemini.create_model),
}


# ------------------------------------------------------------------------- the project


_WORDS = (
    "token", "session", "buffer", "parser", "render", "config", "request", "stream", "cache",
    "index", "record", "schema", "filter", "widget", "socket", "ledger", "signal", "vector",
)  # fmt: skip


def write_project(root: Path, rng: random.Random) -> list[str]:
    """A source tree of 60 Python modules of 2-12 kB; their paths, relative to `root`."""
    paths: list[str] = []
    for number in range(60):
        name = f"src/{rng.choice(_WORDS)}_{number:02d}.py"
        lines = [f'"""The {name} module."""', "", "from __future__ import annotations", ""]
        size = rng.randint(2_000, 12_000)
        while sum(len(line) + 1 for line in lines) < size:
            noun, verb = rng.choice(_WORDS), rng.choice(_WORDS)
            lines += [
                f"def {verb}_{noun}_{len(lines)}(value: int, other: str = {noun!r}) -> str:",
                f'    """Turn the {noun} into a {verb} ({len(lines)})."""',
                f"    if value > {rng.randint(1, 999)}:",
                f"        return other.upper() + str(value * {rng.randint(2, 9)})",
                f"    return f'{{other}}-{{value}}-{verb}'",
                "",
            ]
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(name)
    return paths


# ---------------------------------------------------------------------------- the script


def turn_script(turn: int, paths: Sequence[str], rng: random.Random) -> list[Reply]:
    """The model's replies for one user turn: tool rounds, then an answer."""
    kind = 3 if turn % 8 == 7 else turn % 3  # a big batch every eighth turn
    words = " ".join(rng.choice(_WORDS) for _ in range(8))
    steps: list[Reply] = []
    if kind == 0:
        first, second, third = rng.sample(list(paths), 3)
        steps.append(Reply("Let me read the two modules involved.", [_read(first), _read(second)]))
        steps.append(Reply("", [_read(third)]))
    elif kind == 1:
        pattern = f"def {rng.choice(_WORDS)}_"
        steps.append(Reply("", [Call("grep", {"pattern": pattern, "path": "src"})]))
        steps.append(Reply("Reading the best match.", [_read(rng.choice(list(paths)))]))
    elif kind == 2:
        steps.append(
            Reply("", [Call("glob", {"pattern": "src/*.py"}), Call("ls", {"path": "src"})])
        )
        steps.append(Reply("", [_read(p) for p in rng.sample(list(paths), 2)]))
    else:
        # A dozen reads at once: more than 20 blocks appended in one step.
        steps.append(Reply("Reading them all.", [_read(p) for p in rng.sample(list(paths), 12)]))
    answer = f"Turn {turn}: here is what I found. " + " ".join(
        f"The {words.split()[i % 8]} path handles case {i}." for i in range(rng.randint(15, 40))
    )
    steps.append(Reply(answer))
    return steps


def _read(path: str) -> Call:
    return Call("read", {"path": path})


class ScriptedBrain:
    """The fake model: each user turn's replies in order, and a summary when asked for one."""

    def __init__(self, turns: list[list[Reply]]) -> None:
        self._turns = turns
        self._turn = 0
        self._step = 0
        self.summaries = 0

    def start(self, turn: int) -> None:
        self._turn, self._step = turn, 0

    def __call__(self, summary: bool) -> Reply:
        if summary:
            self.summaries += 1
            return Reply("Summary of the work so far: " + "modules read and explained. " * 60)
        steps = self._turns[self._turn]
        reply = steps[min(self._step, len(steps) - 1)]
        self._step += 1
        return reply


# ------------------------------------------------------------------------ the recording


@dataclass
class Sent:
    request: ModelRequest
    fresh: list[Message]
    """What the conversation gained since the previous request (for the append-only ideal)."""
    summary: bool


class RecordingModel:
    """The real adapter, with each request and what the conversation appended before it."""

    def __init__(self, model: Model) -> None:
        self._model = model
        self.sent: list[Sent] = []
        self.session: AgentSession | None = None
        self._seen = 0

    @property
    def provider_id(self) -> str:
        return self._model.provider_id

    @property
    def model_id(self) -> str:
        return self._model.model_id

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        assert self.session is not None
        messages = self.session.transcript.messages()
        fresh = list(messages[self._seen :])
        self._seen = len(messages)
        summary = is_summary_request(request)
        if summary and request.system != SUMMARY_SYSTEM_PROMPT:
            fresh.append(request.messages[-1])
        self.sent.append(Sent(request, fresh, summary))
        return self._model.stream(request)

    async def aclose(self) -> None:
        await self._model.aclose()


def fresh_segments(wire: Wire, model_id: str, fresh: Sequence[Message]) -> int:
    """How many of the fake's segments the appended messages make on `wire`."""
    request = ModelRequest(system="", messages=list(fresh))
    endpoint = Endpoint(provider_id="bench", api="openai-chat")
    match wire:
        case "anthropic":
            body = {"messages": anthropic_messages.build_messages(request.messages)}
        case "openai-chat":
            body = {"messages": chat_params(model_id, request, endpoint)["messages"]}
        case "openai-responses":
            body = {"input": responses_input(request.messages)}
        case "gemini":
            body = {"contents": gemini.build_contents(request.messages)}
    return len(SEGMENTERS[wire](body))


# --------------------------------------------------------------------------- one wire


@dataclass
class WireResult:
    wire: Wire
    model: str
    calls: int = 0
    input: int = 0
    read: int = 0
    ideal_read: int = 0
    written: int = 0
    ideal_written: int = 0
    output: int = 0
    cost: float = 0.0
    ideal_cost: float = 0.0
    uncached_cost: float = 0.0
    reported_cost: float | None = None
    reported_read: int = 0
    compactions: int = 0
    summary_shared: int = 0
    around_compaction: list[str] = field(default_factory=lambda: [])
    """Per compaction: what the summary request and the two requests after it read."""
    errors: list[str] = field(default_factory=lambda: [])
    seconds: float = 0.0

    @property
    def share(self) -> float:
        return self.read / self.input if self.input else 0.0

    @property
    def ideal_share(self) -> float:
        return self.ideal_read / self.input if self.input else 0.0

    @property
    def ratio(self) -> float:
        return self.read / self.ideal_read if self.ideal_read else 0.0

    @property
    def cost_ratio(self) -> float:
        return self.cost / self.ideal_cost if self.ideal_cost else 0.0


async def run_wire(
    wire: Wire,
    root: Path,
    *,
    turns: int,
    cache: CacheSetting,
    window: int = WINDOW,
    seed: int = 25,
) -> WireResult:
    rng = random.Random(seed)
    project = root / wire / "project"
    paths = write_project(project, rng)
    script = [turn_script(turn, paths, rng) for turn in range(turns)]
    brain = ScriptedBrain(script)
    spec = MODELS[wire]
    minimum = minimum_cacheable_tokens(spec.model) if wire == "anthropic" else 1024
    fake = FakeProvider(
        wire,
        brain,
        model=spec.model,
        minimum_tokens=minimum,
        summary_markers=(SUMMARY_REQUEST_OPENING, SUMMARY_SYSTEM_PROMPT[:60]),
    )
    result = WireResult(wire=wire, model=f"{spec.provider}/{spec.model}")
    started = time.perf_counter()
    with serving(fake):
        api = "openai-chat" if wire == "openai-chat" else wire
        endpoint = Endpoint(
            provider_id=spec.provider, api=api, base_url=fake.url, api_key="bench-key"
        )
        recording = RecordingModel(spec.create(spec.model, endpoint))
        catalog = ModelCatalog.load(
            overrides={f"{spec.provider}/{spec.model}": ModelOverride(context_window=window)}
        )
        session = await create_session(
            store=SessionStore(root / wire / "sessions"),
            cwd=project,
            options=SessionOptions(model_name=f"{spec.provider}/{spec.model}", max_turns=50),
            model_factory=lambda name: recording,
            catalog=catalog,
            settings=Settings(cache=cache),
            data_dir=root / wire / "data",
        )
        recording.session = session
        try:
            for turn in range(turns):
                brain.start(turn)
                async for event in session.run_turn(f"Turn {turn}: explain what these do."):
                    if isinstance(event, CompactionFinished) and event.ok:
                        result.compactions += 1
            tracker = session.usage.tracker
            result.reported_cost = tracker.cost_usd
            result.reported_read = tracker.total.cached_input_tokens
        finally:
            await session.aclose()
    result.seconds = time.perf_counter() - started
    result.errors = fake.errors
    info = catalog.get(spec.provider, spec.model)
    assert info is not None
    _account(result, wire, spec.model, fake, recording, info, minimum)
    return result


def _account(
    result: WireResult,
    wire: Wire,
    model_id: str,
    fake: FakeProvider,
    recording: RecordingModel,
    info: ModelInfo,
    minimum: int,
) -> None:
    assert len(fake.exchanges) == len(recording.sent), "every request reached the fake"
    for number, (exchange, sent) in enumerate(zip(fake.exchanges, recording.sent, strict=True)):
        use = exchange.use
        result.calls += 1
        result.input += use.input_tokens
        result.read += use.read
        result.written += use.written
        result.output += exchange.output_tokens
        if sent.summary and sent.request.system != SUMMARY_SYSTEM_PROMPT:
            result.summary_shared += 1
        appended = fresh_segments(wire, model_id, sent.fresh)
        kept = exchange.segments[: len(exchange.segments) - appended]
        if number == 0:
            ideal = 0
        elif wire == "anthropic":
            ideal = sum(s.tokens for s in kept)
            ideal = ideal if ideal >= minimum else 0
        else:  # the whole 128-token steps of what was there before
            step = PREFIX_STEP_TOKENS * CHARS_PER_TOKEN
            ideal = sum(len(s.canonical) for s in kept) // step * PREFIX_STEP_TOKENS
            ideal = ideal if ideal >= PREFIX_MINIMUM_TOKENS else 0
        ideal_written = use.input_tokens - ideal if wire == "anthropic" else 0
        result.ideal_read += ideal
        result.ideal_written += ideal_written
        actual = Usage(
            input_tokens=use.input_tokens,
            cached_input_tokens=use.read,
            cache_write_tokens=use.written,
            cache_write_1h_tokens=use.written_1h,
            output_tokens=exchange.output_tokens,
        )
        best = Usage(
            input_tokens=use.input_tokens,
            cached_input_tokens=ideal,
            cache_write_tokens=ideal_written,
            cache_write_1h_tokens=ideal_written if use.written_1h else 0,
            output_tokens=exchange.output_tokens,
        )
        plain = Usage(input_tokens=use.input_tokens, output_tokens=exchange.output_tokens)
        result.cost += cost_usd(info, actual) or 0.0
        result.ideal_cost += cost_usd(info, best) or 0.0
        result.uncached_cost += cost_usd(info, plain) or 0.0
    exchanges = fake.exchanges
    for number, exchange in enumerate(exchanges):
        if not exchange.summary:
            continue
        reads = [
            f"{e.use.read:,} of {e.use.input_tokens:,}" for e in exchanges[number : number + 3]
        ]
        result.around_compaction.append(
            f"the summary request read {reads[0]} tokens from the cache, the next requests "
            + " and ".join(reads[1:])
        )


# ------------------------------------------------------------------------------ report


def render(
    results: Sequence[WireResult],
    *,
    turns: int,
    cache: CacheSetting,
    without: Sequence[WireResult] = (),
) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        SECTION,
        "",
        f"Measured {date.today().isoformat()} on CPython {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load {load:.1f} "
        "(the figures are token counts: load changes none of them).",
        f"Command: `.venv/bin/python -m bench.cost` ({turns} turns, `cache: {cache}`, window "
        f"{WINDOW:,} tokens). One scripted session per wire through the real agent and the real "
        "vendor SDK, against a loopback fake keeping that vendor's documented prompt cache "
        "(`bench/cost_fakes.py`). Ideal: every request reads all of the previous one and pays "
        "only for what was appended since, within the wire's rules (minimum, 128-token steps); "
        "costs at the catalog's prices for the model.",
        "",
        "| wire (model) | calls | input tokens | read from cache | best append-only | ratio "
        "(target >= 0.95) | cost | ideal cost | cost / ideal (target <= 1.1) | no caching | "
        "earshot's own count |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        reported = (
            "unknown"
            if r.reported_cost is None
            else f"${r.reported_cost:.4f}, {r.reported_read:,} read"
        )
        lines.append(
            f"| {r.wire} ({r.model}) | {r.calls} | {r.input:,} | {r.share:.1%} | "
            f"{r.ideal_share:.1%} | {r.ratio:.3f} | ${r.cost:.4f} | ${r.ideal_cost:.4f} | "
            f"{r.cost_ratio:.3f} | ${r.uncached_cost:.4f} | {reported} |"
        )
    lines.append("")
    if without:
        lines += [
            "The same session with `cache: off`: no breakpoints, no `prompt_cache_key`, pruning "
            "whenever it frees enough (earshot's ways before issue 25, but for the summary "
            "request, the new one in both runs); automatic caches still work on their own:",
            "",
            "| wire | read from cache | ratio | cost | cost / ideal | with caching |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for off, on in zip(without, results, strict=True):
            lines.append(
                f"| {off.wire} | {off.share:.1%} | {off.ratio:.3f} | ${off.cost:.4f} | "
                f"{off.cost_ratio:.3f} | ${on.cost:.4f} |"
            )
        lines.append("")
    for r in results:
        shared = f"{r.summary_shared} asked at the end of the conversation"
        around = "".join(f"; {note}" for note in r.around_compaction)
        lines.append(
            f"- {r.wire}: {r.compactions} automatic compaction(s) (summary requests: {shared}"
            f"{around}); {r.written:,} tokens written to the cache (ideal {r.ideal_written:,}); "
            f"{r.output:,} output tokens; {len(r.errors)} refused requests; {r.seconds:.1f} s."
        )
    return "\n".join(lines) + "\n"


async def main_async(
    turns: int, cache: CacheSetting, wires: Sequence[Wire], compare: bool
) -> tuple[list[WireResult], list[WireResult]]:
    results: list[WireResult] = []
    without: list[WireResult] = []
    with tempfile.TemporaryDirectory(prefix="earshot-cost-") as tmp:
        for wire in wires:
            results.append(await run_wire(wire, Path(tmp) / "on", turns=turns, cache=cache))
            if compare:
                without.append(await run_wire(wire, Path(tmp) / "off", turns=turns, cache="off"))
    return results, without


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--cache", choices=("5m", "1h"), default="5m")
    parser.add_argument("--wire", choices=WIRES, action="append")
    parser.add_argument("--no-compare", action="store_true", help="skip the `cache: off` runs")
    args = parser.parse_args(argv)
    wires = tuple(args.wire or WIRES)
    results, without = anyio.run(main_async, args.turns, args.cache, wires, not args.no_compare)
    text = render(results, turns=args.turns, cache=args.cache, without=without)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    met = all(r.ratio >= 0.95 and r.cost_ratio <= 1.1 for r in results)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
