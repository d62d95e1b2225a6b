"""ACP server benchmarks; writes the `## acp` section of bench/RESULTS.md.

    .venv/bin/python bench/acp.py [--runs 20] [--deltas 100000] [--no-write] [--dev-venv]

The server runs from a throwaway virtual environment holding a regular (non-editable) install of
this tree, built as a wheel, so its modules load from compiled bytecode as they would for a user;
third-party dependencies come from `.venv` through a `.pth` line. `--dev-venv` measures
`.venv/bin/earshot` instead.

Targets (issue 14), each measured against a bare `python -c pass` of the same venv in the same
run (the two take turns, so a burst of load hits both):
- spawn -> `initialize` reply at most 5x the bare start (median);
- spawn -> `session/new` answered at most 10x;
- resident memory after `session/new` at most 40 MB (measured once the session is open and
  warmed up, 1 s after the answer: what the process holds while the user types);
- a prompt sent 1 s after `session/new` reaches the model within 30 ms (p50) of being written to
  stdin: the model is an OpenAI-compatible server on 127.0.0.1 (the real SDK and HTTP), and the
  clock is read when its handler gets the request line.
Also: exit after stdin closes, text deltas per second, and 20 sessions asked for at once, each
then prompted (all first answers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from results_md import write_section
from wheel_venv import build_venv

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## acp"
DEV_VENV = ROOT / ".venv"
PROMPT_DELAY = 1.0
"""How long after the `session/new` answer the user's first prompt is sent."""
SESSIONS_AT_ONCE = 20


# ------------------------------------------------------------------------ loopback model


def _sse(text: str) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [chunk({"role": "assistant", "content": ""}), chunk({"content": text})]
    return ("".join([*parts, chunk({}, "stop")]) + "data: [DONE]\n\n").encode()


class LoopbackModel:
    """An OpenAI-compatible chat server on 127.0.0.1 that notes when each request arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.arrived = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                model.arrivals.append(time.perf_counter())
                model.arrived.set()
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                body = _sse("ok")
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # the model list: none
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------- set-up


@dataclass
class Setup:
    earshot: Path
    python: Path
    workspace: Path
    env: dict[str, str]
    """The scripted model answering "ok" (start-up and memory runs)."""
    stream_env: dict[str, str]
    """The scripted model streaming the delta-rate turn."""
    loopback_env: dict[str, str]
    """An OpenAI-compatible provider on the loopback model (the real SDK, real HTTP)."""


def _config(work: Path, name: str, settings: dict[str, Any]) -> Path:
    home = work / name
    (home / "earshot").mkdir(parents=True)
    (home / "earshot" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return home


def _scripted(work: Path, name: str, turn: dict[str, Any]) -> dict[str, Any]:
    script = work / f"{name}.json"
    script.write_text(json.dumps({"turns": [turn] * SESSIONS_AT_ONCE}), encoding="utf-8")
    return {"providers": {"bench": {"api": "scripted", "script": str(script)}}, "model": "bench/x"}


def make_setup(work: Path, earshot: Path, deltas: int, model: LoopbackModel) -> Setup:
    workspace = work / "workspace"
    workspace.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base.update(XDG_DATA_HOME=str(work / "data"), HOME=str(work))

    def env(config_home: Path) -> dict[str, str]:
        return {**base, "XDG_CONFIG_HOME": str(config_home)}

    short = _config(work, "config", _scripted(work, "short", {"text": "ok"}))
    stream_turn = {"text": "x" * deltas, "chunk_size": 1}
    stream = _config(work, "config-stream", _scripted(work, "stream", stream_turn))
    provider = {"api": "openai-chat", "baseUrl": model.url, "apiKey": "bench-key"}
    loopback = _config(
        work, "config-loopback", {"providers": {"local": provider}, "model": "local/bench"}
    )
    return Setup(
        earshot=earshot,
        python=earshot.parent / "python",
        workspace=workspace,
        env=env(short),
        stream_env=env(stream),
        loopback_env=env(loopback),
    )


class Agent:
    """A spawned server with a blocking line reader (the benchmark is sequential)."""

    def __init__(self, setup: Setup, env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(setup.earshot), "--stdio"],
            cwd=setup.workspace,
            env=setup.env if env is None else env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.next_id = 0
        self.answers: dict[int, dict[str, Any]] = {}
        """Responses read while waiting for another one (answers come in any order)."""

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.stdin.write((json.dumps(line) + "\n").encode())
        self.stdin.flush()
        return self.next_id

    def until_response(
        self, request_id: int, on_message: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        while request_id not in self.answers:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            message = json.loads(line)
            if "method" not in message:
                self.answers[message["id"]] = message
            elif on_message is not None:
                on_message(message)
        message = self.answers.pop(request_id)
        if "error" in message:
            raise RuntimeError(f"request {request_id} failed: {message['error']}")
        return message["result"]

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def close(self) -> float:
        """Close stdin; ms until the process exited."""
        started = time.perf_counter()
        self.stdin.close()
        self.process.wait(timeout=30)
        return (time.perf_counter() - started) * 1000


def initialize(agent: Agent) -> float:
    """ms from spawn to the `initialize` reply."""
    request_id = agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    agent.until_response(request_id)
    return (time.perf_counter() - agent.started) * 1000


def new_session(agent: Agent, setup: Setup) -> tuple[str, float]:
    """(the id, ms from spawn to the answer)."""
    request_id = agent.send("session/new", {"cwd": str(setup.workspace), "mcpServers": []})
    result = agent.until_response(request_id)
    return result["sessionId"], (time.perf_counter() - agent.started) * 1000


def prompt_params(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}


def bare_start(setup: Setup) -> float:
    """ms for `python -c pass` of the same venv."""
    started = time.perf_counter()
    subprocess.run([str(setup.python), "-c", "pass"], env=setup.env, check=True)
    return (time.perf_counter() - started) * 1000


# --------------------------------------------------------------------------------- runs


@dataclass
class Run:
    bare_ms: float
    init_ms: float
    new_ms: float
    rss_answered_mb: float
    rss_open_mb: float
    exit_ms: float
    first_prompt_ms: float
    """A prompt sent as soon as `session/new` is answered, to its answer (it waits for the
    session to open)."""


def one_run(setup: Setup) -> Run:
    bare = bare_start(setup)
    agent = Agent(setup)
    init_ms = initialize(agent)
    _, new_ms = new_session(agent, setup)
    rss_answered = agent.rss_mb()
    time.sleep(PROMPT_DELAY)
    rss_open = agent.rss_mb()
    exit_ms = agent.close()
    agent = Agent(setup)
    initialize(agent)
    session_id, _ = new_session(agent, setup)
    started = time.perf_counter()
    agent.until_response(agent.send("session/prompt", prompt_params(session_id)))
    first_prompt = (time.perf_counter() - started) * 1000
    agent.close()
    return Run(bare, init_ms, new_ms, rss_answered, rss_open, exit_ms, first_prompt)


@dataclass
class PromptRun:
    to_model_ms: float
    rss_mb: float
    answered_ms: float


def prompt_to_model(setup: Setup, model: LoopbackModel) -> PromptRun:
    """A prompt written `PROMPT_DELAY` after the `session/new` answer: ms until the model's
    handler has its request."""
    agent = Agent(setup, setup.loopback_env)
    initialize(agent)
    session_id, _ = new_session(agent, setup)
    time.sleep(PROMPT_DELAY)
    rss = agent.rss_mb()
    model.arrivals.clear()
    model.arrived.clear()
    request_id = agent.send("session/prompt", prompt_params(session_id))
    written = time.perf_counter()
    agent.until_response(request_id)
    answered = (time.perf_counter() - written) * 1000
    agent.close()
    assert model.arrivals, "the prompt never reached the model"
    return PromptRun((model.arrivals[0] - written) * 1000, rss, answered)


def sessions_at_once(setup: Setup) -> tuple[float, float]:
    """`SESSIONS_AT_ONCE` `session/new` written together, then a prompt in each: (ms until the
    last answer to `session/new`, ms until the last first prompt was answered)."""
    agent = Agent(setup)
    initialize(agent)
    started = time.perf_counter()
    params: dict[str, Any] = {"cwd": str(setup.workspace), "mcpServers": []}
    requests = [agent.send("session/new", params) for _ in range(SESSIONS_AT_ONCE)]
    ids = [agent.until_response(request)["sessionId"] for request in requests]
    answered = (time.perf_counter() - started) * 1000
    prompts = [agent.send("session/prompt", prompt_params(session_id)) for session_id in ids]
    for request in prompts:
        agent.until_response(request)
    prompted = (time.perf_counter() - started) * 1000
    agent.close()
    return answered, prompted


def delta_rate(setup: Setup, deltas: int) -> tuple[float, float]:
    """(deltas per second on stdout during the turn, whole prompt seconds)."""
    agent = Agent(setup, setup.stream_env)
    initialize(agent)
    session_id, _ = new_session(agent, setup)
    seen: list[float] = []

    def count(message: dict[str, Any]) -> None:
        update = message.get("params", {}).get("update", {})
        if update.get("sessionUpdate") == "agent_message_chunk":
            seen.append(time.perf_counter())

    started = time.perf_counter()
    agent.until_response(agent.send("session/prompt", prompt_params(session_id)), count)
    total = time.perf_counter() - started
    agent.close()
    assert len(seen) == deltas, (len(seen), deltas)
    return (len(seen) - 1) / (seen[-1] - seen[0]), total


IMPORT_STEPS = (
    ("the event loop: asyncio + anyio", "asyncio, anyio, anyio._backends._asyncio"),
    ("the transport and the server (`acp_server.stdio` -> `server`)", "acp_server.server"),
    (
        "`session/new`'s answer: settings, registry, catalog, pickers, ids",
        "earshot.acp_main, earshot.compose, agent.settings.scopes, providers.registry, "
        "providers.catalog, acp_server.config, sessions.ids, sessions.reserve",
    ),
    ("sessions.store", "sessions.store"),
    ("pydantic", "pydantic"),
    ("agent.session.agent_session (loop, tools, permissions)", "agent.session.agent_session"),
    ("earshot.mcp_tools + acp_server.live", "earshot.mcp_tools, acp_server.live"),
    ("the SDK of the first call (openai)", "openai"),
)
STEP_CODE = """
import sys, time, json
times = []
for name, modules in json.loads(sys.argv[1]):
    started = time.perf_counter()
    exec("import " + modules)
    times.append((time.perf_counter() - started) * 1000)
print(json.dumps(times))
"""


def import_costs(setup: Setup, runs: int = 7) -> list[tuple[str, float]]:
    """Each layer on top of the previous ones (minimum over `runs` fresh processes, to see
    through machine noise)."""
    samples: list[list[float]] = []
    for _ in range(runs):
        result = subprocess.run(
            [str(setup.python), "-c", STEP_CODE, json.dumps(IMPORT_STEPS)],
            env=setup.env,
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(json.loads(result.stdout))
    return [(name, min(run[i] for run in samples)) for i, (name, _) in enumerate(IMPORT_STEPS)]


# ------------------------------------------------------------------------------- report


@dataclass
class Results:
    runs: list[Run]
    prompts: list[PromptRun]
    at_once: list[tuple[float, float]]
    rate: float
    prompt_s: float
    deltas: int
    costs: list[tuple[str, float]]
    load: tuple[float, float] = field(default=(0.0, 0.0))


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(results: Results, command: str, where: str) -> str:
    runs = results.runs

    def row(name: str, values: list[float], target: str, unit: str = "ms") -> str:
        return (
            f"| {name} | {median(values):.1f} {unit} | {min(values):.1f} | {max(values):.1f} "
            f"| {target} |"
        )

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    bare = [r.bare_ms for r in runs]
    init_ratio = [r.init_ms / r.bare_ms for r in runs]
    new_ratio = [r.new_ms / r.bare_ms for r in runs]
    to_model = [p.to_model_ms for p in results.prompts]
    rss_open = [r.rss_open_mb for r in runs]
    lines = [
        SECTION,
        "",
        f"Command: `{command}`. Server: {where}.",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {results.load[0]:.1f} at the start and "
        f"{results.load[1]:.1f} at the end (a shared machine). Date: {time.strftime('%Y-%m-%d')}. "
        f"{len(runs)} runs; each run starts a bare `python -c pass` of the same venv first.",
        "",
        "| measure | median | min | max | target |",
        "| --- | ---: | ---: | ---: | --- |",
        row("bare `python -c pass` (same venv)", bare, ""),
        row("spawn -> `initialize` reply", [r.init_ms for r in runs], ""),
        row(
            "spawn -> `initialize` reply / bare start",
            init_ratio,
            f"<= 5x: {verdict(median(init_ratio) <= 5)}",
            "x",
        ),
        row("spawn -> `session/new` answered", [r.new_ms for r in runs], ""),
        row(
            "spawn -> `session/new` answered / bare start",
            new_ratio,
            f"<= 10x: {verdict(median(new_ratio) <= 10)}",
            "x",
        ),
        row(
            "resident memory when `session/new` is answered",
            [r.rss_answered_mb for r in runs],
            "",
            "MB",
        ),
        row(
            f"resident memory {PROMPT_DELAY:g} s after `session/new` (session open and warmed "
            "up; the scripted model: no SDK)",
            rss_open,
            f"<= 40 MB: {verdict(median(rss_open) <= 40)}",
            "MB",
        ),
        row(
            f"a prompt written {PROMPT_DELAY:g} s after `session/new` -> the model has it "
            "(loopback OpenAI-compatible server, the real SDK)",
            to_model,
            f"<= 30 ms p50: {verdict(median(to_model) <= 30)}",
        ),
        row(
            "the same prompt, to its answer",
            [p.answered_ms for p in results.prompts],
            "",
        ),
        row(
            "resident memory then (the SDK loaded)",
            [p.rss_mb for p in results.prompts],
            "",
            "MB",
        ),
        row(
            "a prompt sent as soon as `session/new` is answered, to its answer (it waits for "
            "the session to open)",
            [r.first_prompt_ms for r in runs],
            "",
        ),
        row(
            f"{SESSIONS_AT_ONCE} `session/new` at once: the last answer",
            [a for a, _ in results.at_once],
            "",
        ),
        row(
            "... then a prompt in each: the last answer (from the first `session/new`)",
            [b for _, b in results.at_once],
            "",
        ),
        row("exit after stdin closes", [r.exit_ms for r in runs], ""),
        "",
        f"Streaming: {results.deltas:,} one-character text deltas from the scripted model reached "
        f"stdout at **{results.rate:,.0f} per second** (first to last chunk; the whole prompt "
        f"took {results.prompt_s:.2f} s).",
        "",
        "How a session opens: the event loop starts and the transport reads `initialize` like any "
        "request (nothing of the agent, no pydantic, no SDK loads before that reply: "
        "`tests/acp_server/test_stdio.py` checks it). `session/new` is answered from the settings, "
        "the credentials and the catalog with an id whose file is already on disk; the session is "
        "then built as a task on the loop, and once open, a worker thread imports the tool "
        "modules and the model's SDK and builds its client. Import cost per layer, each step on "
        "top of the previous ones (minimum of 7 fresh processes, same install); the first two "
        "rows are paid before the `initialize` reply, the third before the `session/new` answer:",
        "",
        "| layer | ms |",
        "| --- | ---: |",
        *(f"| {name} | {ms:.1f} |" for name, ms in results.costs),
        f"| total | {sum(ms for _, ms in results.costs):.1f} |",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dev-venv", action="store_true")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    model = LoopbackModel()
    try:
        with tempfile.TemporaryDirectory(prefix="earshot-bench-acp-") as temp:
            work = Path(temp)
            if args.dev_venv:
                earshot, where = DEV_VENV / "bin" / "earshot", "`.venv/bin/earshot` (editable)"
            else:
                earshot, _ = build_venv(work)
                where = "a fresh venv with this tree installed from its wheel (compiled bytecode)"
            setup = make_setup(work, earshot, args.deltas, model)
            for _ in range(2):  # compile and cache what the runs load
                one_run(setup)
            runs = [one_run(setup) for _ in range(args.runs)]
            prompts = [prompt_to_model(setup, model) for _ in range(args.runs)]
            at_once = [sessions_at_once(setup) for _ in range(max(3, args.runs // 4))]
            rate, prompt_s = delta_rate(setup, args.deltas)
            costs = import_costs(setup)
    finally:
        model.close()
    results = Results(
        runs=runs,
        prompts=prompts,
        at_once=at_once,
        rate=rate,
        prompt_s=prompt_s,
        deltas=args.deltas,
        costs=costs,
        load=(load_start, os.getloadavg()[0]),
    )
    command = "python bench/acp.py" + (f" --runs {args.runs}" if args.runs != 20 else "")
    text = report(results, command, where)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
