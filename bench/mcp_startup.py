"""What a hung MCP server costs a session's first prompt (issue 30); writes the `## mcp startup`
section of bench/RESULTS.md.

    .venv/bin/python bench/mcp_startup.py [--runs 5] [--no-write]

`earshot --stdio` (this tree's `.venv`) is spawned per run with an OpenAI-compatible model on
127.0.0.1 (the real SDK and HTTP; the clock is read when its handler gets the request), and
three sessions are opened in it one after the other, each prompted once, measuring the time from
writing the prompt to the model having it:
- the process's first session, prompted 1 s after its `session/new` answer (as when a user
  types). With an MCP server this includes loading the MCP SDK (half a second of CPU, in a worker
  thread beside the turn when it has not finished by then): a cost of MCP in each process, paid
  once, whatever the server does;
- a second session, prompted 1 s after its answer: the SDK loaded, only the server's own cost;
- a third session, prompted as soon as `session/new` is answered (it waits for the session to
  open and warm up).
Scenarios, taking turns within each run so that a burst of load hits each: no MCP server; one
server in the user's settings that starts but never answers (`python -c "import time;
time.sleep(60)"`, the issue's case) with the default `mcp.startupWait` (1 s), and with `0`. The
overhead is the difference of medians against no server (and of the fastest runs, closer to an
idle machine); target: at most the wait plus 100 ms. Also: the time from closing stdin to the exit
(each session's hung server is shut down first: the SDK closes its stdin, waits 2 s, then
terminates it).
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
from dataclasses import dataclass
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from results_md import write_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## mcp startup"
PROMPT_DELAY = 1.0
HUNG = [sys.executable, "-c", "import time; time.sleep(60)"]
SCENARIOS: dict[str, dict[str, Any]] = {
    "no MCP server": {},
    "one hung server, `mcp.startupWait` 1 s (the default)": {
        "mcpServers": {"hung": {"command": HUNG[0], "args": HUNG[1:]}}
    },
    "one hung server, `mcp.startupWait` 0": {
        "mcpServers": {"hung": {"command": HUNG[0], "args": HUNG[1:]}},
        "mcp": {"startupWait": 0},
    },
}
BUDGET = {name: (1.0 if "1 s" in name else 0.0) for name in SCENARIOS}


class LoopbackModel:
    """An OpenAI-compatible chat server on 127.0.0.1 that notes when each request arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                model.arrivals.append(time.perf_counter())
                self.rfile.read(int(self.headers.get("content-length") or 0))
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
                deltas: list[tuple[dict[str, str], str | None]] = [
                    ({"role": "assistant", "content": "ok"}, None),
                    ({}, "stop"),
                ]
                body = "".join(
                    "data: "
                    + json.dumps(
                        {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
                    )
                    + "\n\n"
                    for d, f in deltas
                )
                data = (body + "data: [DONE]\n\n").encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # the model list: none
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Setup:
    workspace: Path
    env: dict[str, str]


class Agent:
    """`earshot --stdio`, spawned, with a blocking line reader (the benchmark is sequential)."""

    def __init__(self, setup: Setup) -> None:
        self.process = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "earshot"), "--stdio"],
            cwd=setup.workspace,
            env=setup.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.next_id = 0

    def call(
        self, method: str, params: dict[str, Any], *, written: list[float] | None = None
    ) -> Any:
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.stdin.write((json.dumps(line) + "\n").encode())
        self.stdin.flush()
        if written is not None:
            written.append(time.perf_counter())
        while True:
            message = json.loads(self.stdout.readline() or b"null")
            if message is None:
                raise RuntimeError("the server closed its output")
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]

    def close(self) -> float:
        """Close stdin; ms until the process exited."""
        started = time.perf_counter()
        self.stdin.close()
        self.process.wait(timeout=60)
        return (time.perf_counter() - started) * 1000


@dataclass
class Sample:
    first_ms: float
    """The process's first session, prompted 1 s after `session/new`."""
    later_ms: float
    """A second session, prompted 1 s after `session/new`."""
    early_ms: float
    """A third session, prompted as soon as `session/new` is answered."""
    exit_ms: float


def setup_for(work: Path, extra: dict[str, Any], model: LoopbackModel) -> Setup:
    config = work / f"config-{len(list(work.iterdir()))}"
    (config / "earshot").mkdir(parents=True)
    provider = {"api": "openai-chat", "baseUrl": model.url, "apiKey": "bench-key"}
    settings = {"providers": {"local": provider}, "model": "local/bench", **extra}
    (config / "earshot" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    workspace = work / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(XDG_DATA_HOME=str(work / "data"), HOME=str(work), XDG_CONFIG_HOME=str(config))
    return Setup(workspace=workspace, env=env)


def to_model(agent: Agent, setup: Setup, model: LoopbackModel, delay: float) -> float:
    """A new session prompted `delay` s after its answer: ms until the model has the prompt."""
    session = agent.call("session/new", {"cwd": str(setup.workspace), "mcpServers": []})
    if delay:
        time.sleep(delay)
    model.arrivals.clear()
    written: list[float] = []
    prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]}
    agent.call("session/prompt", prompt, written=written)
    assert model.arrivals, "the prompt never reached the model"
    return (model.arrivals[0] - written[0]) * 1000


def sample(setup: Setup, model: LoopbackModel) -> Sample:
    agent = Agent(setup)
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    first = to_model(agent, setup, model, PROMPT_DELAY)
    later = to_model(agent, setup, model, PROMPT_DELAY)
    early = to_model(agent, setup, model, 0)
    return Sample(first, later, early, agent.close())


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def report(samples: dict[str, list[Sample]], runs: int, started: str, ended: str) -> str:
    base = samples["no MCP server"]

    def med(values: list[float]) -> float:
        return statistics.median(values)

    lines = [
        SECTION,
        "",
        f"Command: `.venv/bin/python bench/mcp_startup.py --runs {runs}` (its docstring says what "
        "each row measures). Server: this tree's `.venv/bin/earshot --stdio`; the model an "
        "OpenAI-compatible server on 127.0.0.1 (the real SDK).",
        f"Machine: CPython {platform.python_version()}, {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs, shared with other jobs and loaded while "
        f"this ran: `uptime` at the start `{started}`, at the end `{ended}`. "
        f"Date: {date.today().isoformat()}. {runs} runs per scenario, the scenarios taking turns.",
        "",
        "| scenario | prompt | -> model: median (min-max) | overhead: medians (fastest "
        "runs) | target (medians) |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    prompts: dict[str, Callable[[Sample], float]] = {
        "first session, 1 s after `session/new`": lambda sample: sample.first_ms,
        "second session, 1 s after": lambda sample: sample.later_ms,
        "third session, at once": lambda sample: sample.early_ms,
    }
    for name, values in samples.items():
        limit = BUDGET[name] * 1000 + 100
        for prompt, of in prompts.items():
            times, base_times = [of(s) for s in values], [of(s) for s in base]
            over = med(times) - med(base_times)
            verdict = f"<= {limit:.0f} ms: {'met' if over <= limit else 'NOT met'}"
            lines.append(
                f"| {name} | {prompt} | {med(times):.0f} ms ({min(times):.0f}-{max(times):.0f}) "
                f"| {over:+.0f} ms ({min(times) - min(base_times):+.0f}) "
                f"| {'' if name == 'no MCP server' else verdict} |"
            )
    exits = ", ".join(
        f"{name}: {med([s.exit_ms for s in values]):.0f} ms" for name, values in samples.items()
    )
    lines += ["", f"Exit after stdin closes (median; three sessions open): {exits}."]
    lines += [
        "",
        "Before issue 30 the same hung server held every session's first prompt for about 15 s "
        "(the 10 s connect timeout, then the rest), as the issue measured. The exit with hung "
        "servers is the SDK's shutdown of them (stdin closed, 2 s grace, then SIGTERM): earshot "
        "waits for it so that no server outlives its session.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    started = uptime()
    model = LoopbackModel()
    samples: dict[str, list[Sample]] = {name: [] for name in SCENARIOS}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            setups = {name: setup_for(work, extra, model) for name, extra in SCENARIOS.items()}
            for run in range(args.runs):
                for name, setup in setups.items():
                    samples[name].append(sample(setup, model))
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
    finally:
        model.close()
    text = report(samples, args.runs, started, uptime())
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
