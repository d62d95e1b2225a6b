"""The ACP start-up targets of issue 14, measured as an editor sees them; writes the
`## acp targets` section of bench/RESULTS.md.

    .venv/bin/python bench/acp_targets.py [--runs 20] [--no-write] [--dev-venv]
                                          [--earshot PATH --python PATH] [--codex PATH]

Targets (each reported met / NOT met):
- spawn -> `initialize` reply: at most 5x a bare `python -c pass` of the same venv, same run
  (`python -c "import asyncio"` is timed beside it: what a reply from the event loop could not
  beat; the server answers a first-line `initialize` before it imports the loop);
- spawn -> `session/new` answered (sent as soon as `initialize` is answered): at most 10x;
- resident memory after `session/new`: at most 40 MB, read when the answer arrives (as
  `acp_probe.py` reads `rss_at_ready_mb`); the RSS 1 s later, once the background warm-up has
  loaded the model's SDK, is shown beside it;
- a prompt sent 1 s after `session/new` reaches the model within 30 ms (p50) of being written
  to stdin: the model is an OpenAI-compatible loopback HTTP server in this process, and the
  time is taken when it has read the request (headers and body) off the socket.

Against codex-acp (issue 25, item 7): when its native binary is found (`--codex PATH`, or the
`EARSHOT_BENCH_CODEX_ACP` environment variable; `npm install @zed-industries/codex-acp@0.16.0`
puts it under `node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp`), every run also
starts earshot and codex-acp once more each, in turns, both timed by `peer_probe.py` the way
`acp_probe.py` times an agent (`initialize` with the `fs` and `terminal` capabilities; codex-acp
then `authenticate`s with `openai-api-key`, a made-up key in `OPENAI_API_KEY` and a fresh
`HOME` each run, as it needs before `session/new`): spawn -> `initialize`, spawn -> `session/new`
answered ("ready"), and the process tree's memory at that answer. Target: earshot's `initialize`
no slower than codex-acp's (medians of the same run), with ready and memory still ahead. Without
the binary the comparison is skipped, and the results say so. Each `--tree DIR` (another checkout,
e.g. `git worktree add /tmp/base main`, built from its wheel like this tree) is started in the
same turns and shown beside them: a before/after of the same runs.

The harness only spawns `earshot --stdio` and speaks JSON-RPC, so it measures any version of the
server. By default the server runs from a throwaway venv holding a regular install of this tree
built as a wheel (compiled bytecode, as a user gets it; third-party packages come from `.venv`
through a `.pth` line), and the bare Python is that venv's `python`. `--dev-venv` measures
`.venv/bin/earshot` (editable install) against `.venv/bin/python`; `--earshot` and `--python` name
any other pair. The cases take turns in every run so that a burst of load hits all alike; the
ratios are of medians taken in the same run. Exits 1 when a target is not met.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
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

from builds import tree_version
from peer_probe import Startup, probe
from results_md import write_section
from wheel_venv import build_venv

ROOT = Path(__file__).resolve().parent.parent
DEV_VENV = ROOT / ".venv"
SECTION = "## acp targets"
INIT_RATIO, NEW_RATIO, RSS_MB, PROMPT_MS = 5.0, 10.0, 40.0, 30.0
IDLE_SECONDS = 1.0
TIMEOUT_SECONDS = 60.0
CODEX_ENV = "EARSHOT_BENCH_CODEX_ACP"


# ------------------------------------------------------------------------- the loopback model


class LoopbackModel:
    """An OpenAI-compatible Chat Completions server on 127.0.0.1 that answers every completion
    with a short streamed text and notes when each request had been read."""

    def __init__(self) -> None:
        self.arrivals: queue.Queue[float] = queue.Queue()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                # Model lists asked for in the background: an empty list.
                self._send(b'{"object": "list", "data": []}', "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if self.path.endswith("/chat/completions"):
                    model.arrivals.put(time.perf_counter())
                    self._send(_COMPLETION, "text/event-stream")
                else:
                    self._send(b"{}", "application/json", status=404)

            def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    data = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return f"data: {json.dumps({**data, 'choices': [choice]})}\n\n"


_COMPLETION = (
    _chunk({"role": "assistant", "content": ""})
    + _chunk({"content": "ok"})
    + _chunk({}, "stop")
    + "data: [DONE]\n\n"
).encode()


# ------------------------------------------------------------------------------ the agent


class Agent:
    """A spawned `earshot --stdio` whose stdout a thread reads into a queue, line by line."""

    def __init__(self, earshot: Path, workspace: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(earshot), "--stdio"],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.lines: queue.Queue[tuple[float, bytes]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,))
        self._reader.daemon = True
        self._reader.start()
        self.next_id = 0

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put((time.perf_counter(), line))
        self.lines.put((time.perf_counter(), b""))

    def send(self, method: str, params: dict[str, Any]) -> tuple[int, float]:
        """(request id, when it was written)."""
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.stdin.write((json.dumps(line) + "\n").encode())
        self.stdin.flush()
        return self.next_id, time.perf_counter()

    def answer(self, request_id: int) -> tuple[dict[str, Any], float]:
        """The result of `request_id` and when its line was read; requests from the agent get an
        error (the client offers no capabilities)."""
        while True:
            at, line = self.lines.get(timeout=TIMEOUT_SECONDS)
            if not line:
                raise RuntimeError("the server closed its output")
            message = json.loads(line)
            if "method" in message:
                if "id" in message:
                    error = {"code": -32601, "message": "not offered"}
                    reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
                    self.stdin.write((json.dumps(reply) + "\n").encode())
                    self.stdin.flush()
                continue
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"request {request_id} failed: {message['error']}")
                return message["result"], at

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def close(self) -> None:
        self.stdin.close()
        try:
            self.process.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ---------------------------------------------------------------------------------- runs


@dataclass
class Run:
    bare_ms: float
    asyncio_ms: float
    """`python -c "import asyncio"`: the floor of any server that answers on an asyncio loop."""
    init_ms: float
    new_ms: float
    """Spawn -> `session/new` answered."""
    rss_at_new_mb: float
    rss_idle_mb: float
    prompt_ms: float
    """Prompt written to stdin -> the model has the request."""
    versus: list[Startup] | None = None
    """earshot, each `--tree` build, and codex-acp when given, started once more each and timed
    alike (`peer_probe`), in `Setup.peers` order."""


@dataclass
class Setup:
    earshot: Path
    python: Path
    workspace: Path
    env: dict[str, str]
    model: LoopbackModel
    codex: Path | None = None
    """codex-acp's native binary, when it is compared."""
    trees: list[tuple[str, Path]] = field(default_factory=lambda: [])
    """Other builds of earshot (label, `earshot`), compared in the same turns."""

    @property
    def peers(self) -> list[str]:
        """The columns of the comparison, in the order they start in each run."""
        codex = ["codex-acp"] if self.codex is not None else []
        return ["earshot", *(label for label, _ in self.trees), *codex]


def make_setup(work: Path, earshot: Path, python: Path, model: LoopbackModel) -> Setup:
    workspace = work / "workspace"
    workspace.mkdir()
    config = work / "config" / "earshot"
    config.mkdir(parents=True)
    settings = {
        "model": "bench/bench-model",
        "providers": {"bench": {"api": "openai-chat", "baseUrl": model.url, "apiKey": "bench"}},
    }
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(work),
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_DATA_HOME=str(work / "data"),
        NO_PROXY="127.0.0.1",
    )
    return Setup(earshot, python, workspace, env, model)


def bare_python(setup: Setup, code: str = "pass") -> float:
    started = time.perf_counter()
    subprocess.run([str(setup.python), "-c", code], env=setup.env, check=True)
    return (time.perf_counter() - started) * 1000


def one_run(setup: Setup) -> Run:
    bare = bare_python(setup)
    floor = bare_python(setup, "import asyncio")
    agent = Agent(setup.earshot, setup.workspace, setup.env)
    try:
        request, _ = agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        _, init_at = agent.answer(request)
        request, _ = agent.send("session/new", {"cwd": str(setup.workspace), "mcpServers": []})
        result, new_at = agent.answer(request)
        rss_at_new = agent.rss_mb()
        time.sleep(IDLE_SECONDS)
        rss_idle = agent.rss_mb()
        while not setup.model.arrivals.empty():
            setup.model.arrivals.get()
        text = {"type": "text", "text": "hi"}
        params = {"sessionId": result["sessionId"], "prompt": [text]}
        request, written = agent.send("session/prompt", params)
        arrived = setup.model.arrivals.get(timeout=TIMEOUT_SECONDS)
        agent.answer(request)
    finally:
        agent.close()
    return Run(
        bare_ms=bare,
        asyncio_ms=floor,
        init_ms=(init_at - agent.started) * 1000,
        new_ms=(new_at - agent.started) * 1000,
        rss_at_new_mb=rss_at_new,
        rss_idle_mb=rss_idle,
        prompt_ms=(arrived - written) * 1000,
        versus=versus(setup) if len(setup.peers) > 1 else None,
    )


def versus(setup: Setup) -> list[Startup]:
    """earshot, each other build, then codex-acp, each started once and timed alike."""
    started = [probe([str(setup.earshot), "--stdio"], setup.workspace, setup.env)]
    for _, earshot in setup.trees:
        started.append(probe([str(earshot), "--stdio"], setup.workspace, setup.env))
    if setup.codex is not None:
        home = Path(tempfile.mkdtemp(prefix="codex-home-", dir=setup.workspace.parent))
        env = {**setup.env, "HOME": str(home), "OPENAI_API_KEY": "sk-bench-not-a-real-key"}
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
            env.pop(name, None)
        command = [str(setup.codex)]
        started.append(probe(command, setup.workspace, env, authenticate="openai-api-key"))
    return started


def find_codex(flag: Path | None) -> Path | None:
    """codex-acp's binary from `--codex` or `EARSHOT_BENCH_CODEX_ACP`, if it is there."""
    named = flag or (Path(os.environ[CODEX_ENV]) if os.environ.get(CODEX_ENV) else None)
    if named is None or not (named.is_file() and os.access(named, os.X_OK)):
        return None
    return named.resolve()


# -------------------------------------------------------------------------------- report


def verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "NOT met"


def report(runs: list[Run], command: str, where: str, peers: list[str]) -> tuple[str, bool]:
    def values(pick: Callable[[Run], float]) -> list[float]:
        return [pick(run) for run in runs]

    def median(pick: Callable[[Run], float]) -> float:
        return statistics.median(values(pick))

    bare = median(lambda r: r.bare_ms)
    checks = [
        ("spawn -> `initialize` reply", median(lambda r: r.init_ms) / bare, INIT_RATIO, "x"),
        ("spawn -> `session/new` answered", median(lambda r: r.new_ms) / bare, NEW_RATIO, "x"),
        ("resident memory after `session/new`", median(lambda r: r.rss_at_new_mb), RSS_MB, " MB"),
        (
            "prompt written 1 s after `session/new` -> at the model (p50)",
            median(lambda r: r.prompt_ms),
            PROMPT_MS,
            " ms",
        ),
    ]
    met = all(value <= limit for _, value, limit, _ in checks)

    def row(name: str, pick: Callable[[Run], float], unit: str) -> str:
        got = values(pick)
        return f"| {name} | {statistics.median(got):.1f} {unit} | {min(got):.1f} | {max(got):.1f} |"

    load = os.getloadavg()[0]
    lines = [
        SECTION,
        "",
        f"Command: `{command}` (its docstring says what each row measures). Server: {where}.",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end. "
        f"Date: {time.strftime('%Y-%m-%d')}. {len(runs)} runs, the cases taking turns.",
        "",
        "| target | result | limit | |",
        "| --- | ---: | ---: | --- |",
        *(
            f"| {name} | {value:.1f}{unit} | {limit:g}{unit} | {verdict(value, limit)} |"
            for name, value, limit, unit in checks
        ),
        "",
        "| measure (wall clock) | median | min | max |",
        "| --- | ---: | ---: | ---: |",
        row("bare `python -c pass`, spawn -> exit", lambda r: r.bare_ms, "ms"),
        row("`python -c 'import asyncio'`, spawn -> exit", lambda r: r.asyncio_ms, "ms"),
        row("spawn -> `initialize` reply", lambda r: r.init_ms, "ms"),
        row("spawn -> `session/new` answered", lambda r: r.new_ms, "ms"),
        row("RSS when `session/new` is answered", lambda r: r.rss_at_new_mb, "MB"),
        row("RSS 1 s later (the model's SDK warmed up)", lambda r: r.rss_idle_mb, "MB"),
        row("prompt 1 s after `session/new`: stdin -> model", lambda r: r.prompt_ms, "ms"),
        "",
        f"Importing asyncio alone takes {median(lambda r: r.asyncio_ms) / bare:.1f}x the bare "
        "start: no reply from an event loop could be within 5x, so the server answers a "
        "first-line `initialize` before it imports the loop (`acp_server/first_line.py`). The "
        "memory target is read when `session/new` is answered, as `acp_probe.py` reads it "
        "(`rss_at_ready_mb`); a second later the background warm-up has loaded the model's SDK, "
        "which the issue asks for so that the first prompt does not wait for it.",
        "",
        *versus_lines(runs, peers),
    ]
    return "\n".join(lines), met


def versus_lines(runs: list[Run], peers: list[str]) -> list[str]:
    columns = [run.versus for run in runs if run.versus is not None]
    if not columns:
        return [
            "codex-acp (the fastest peer) was not given (`--codex PATH` or "
            f"`{CODEX_ENV}`), so only earshot is measured here.",
            "",
        ]
    started = {peer: [run[index] for run in columns] for index, peer in enumerate(peers)}

    def med(peer: str, pick: Callable[[Startup], float]) -> float:
        return statistics.median(pick(value) for value in started[peer])

    def row(name: str, pick: Callable[[Startup], float], unit: str) -> str:
        medians = [med(peer, pick) for peer in peers]
        spread = " / ".join(
            f"{min(pick(v) for v in started[peer]):.1f}-{max(pick(v) for v in started[peer]):.1f}"
            for peer in peers
        )
        best = min(medians)
        ahead = ", ".join(peer for peer, value in zip(peers, medians, strict=True) if value == best)
        cells = " | ".join(f"{value:.1f} {unit}" for value in medians)
        return f"| {name} | {cells} | {spread} | {ahead} |"

    names = " | ".join(peers)
    lines = [
        f"Started in turns, {len(columns)} runs ({', '.join(peers)}), each timed by "
        "`bench/peer_probe.py` as `acp_probe.py` times an agent (codex-acp 0.16.0, the native "
        "binary, authenticates with `openai-api-key` before `session/new`; memory is the process "
        "tree's):",
        "",
        f"| measure (median) | {names} | min-max ({' / '.join(peers)}) | ahead |",
        "| --- |" + " ---: |" * len(peers) + " ---: | --- |",
        row("spawn -> `initialize` answered", lambda v: v.init_ms, "ms"),
        row("spawn -> `session/new` answered (ready)", lambda v: v.ready_ms, "ms"),
        row("resident memory at ready", lambda v: v.rss_at_ready_mb, "MB"),
        "",
    ]
    if "codex-acp" in peers:
        init_ok = med("earshot", lambda v: v.init_ms) <= med("codex-acp", lambda v: v.init_ms)
        ready_ok = med("earshot", lambda v: v.ready_ms) < med("codex-acp", lambda v: v.ready_ms)
        rss_ok = med("earshot", lambda v: v.rss_at_ready_mb) < med(
            "codex-acp", lambda v: v.rss_at_ready_mb
        )
        verdict = "met" if init_ok and ready_ok and rss_ok else "NOT met"
        lines += [
            "Target (issue 25): `initialize` no slower than codex-acp, ready and memory still "
            f"ahead: {verdict}.",
            "",
        ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dev-venv", action="store_true")
    parser.add_argument("--earshot", type=Path, help="any `earshot` to measure (with --python)")
    parser.add_argument("--python", type=Path, help="the bare Python to compare with")
    parser.add_argument("--codex", type=Path, help=f"codex-acp's binary (or ${CODEX_ENV})")
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=[],
        help="also start this checkout, built from its wheel, in the comparison (repeatable)",
    )
    args = parser.parse_args()
    codex = find_codex(args.codex)
    if codex is None:
        print(f"codex-acp not found (--codex PATH or {CODEX_ENV}): comparison skipped")
    model = LoopbackModel()
    try:
        with tempfile.TemporaryDirectory(prefix="earshot-bench-targets-") as temp:
            work = Path(temp)
            if args.earshot is not None:
                earshot = args.earshot.resolve()
                python = (args.python or earshot.parent / "python").absolute()
                where = f"`{earshot}` against `{python} -c pass`"
            elif args.dev_venv:
                earshot, python = DEV_VENV / "bin" / "earshot", DEV_VENV / "bin" / "python"
                where = (
                    f"`.venv/bin/earshot` (editable install, tree at {tree_version(ROOT)}) against "
                    "`.venv/bin/python`"
                )
            else:
                earshot, python = build_venv(work)
                where = (
                    f"a fresh venv with this tree (at {tree_version(ROOT)}) installed from its "
                    "wheel (compiled bytecode), against that venv's `python -c pass`"
                )
            setup = make_setup(work, earshot, python, model)
            setup.codex = codex
            for index, tree in enumerate(args.tree):
                other, _ = build_venv(work, tree.resolve(), name=f"venv-{index}")
                setup.trees.append((f"{tree.name} ({tree_version(tree.resolve())})", other))
            one_run(setup)  # warm the page cache and the bytecode; not counted
            runs = [one_run(setup) for _ in range(args.runs)]
    finally:
        model.close()
    command = "python bench/acp_targets.py" + (f" --runs {args.runs}" if args.runs != 20 else "")
    command += "".join(f" --tree {tree}" for tree in args.tree)
    text, met = report(runs, command, where, setup.peers)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
