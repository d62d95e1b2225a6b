"""ACP server benchmarks; writes the `## acp` section of bench/RESULTS.md.

    .venv/bin/python bench/acp.py [--runs 20] [--deltas 100000] [--no-write] [--dev-venv]
                                  [--probe path/to/acp_probe.py]

The server runs from a throwaway virtual environment holding a regular (non-editable) install of
this tree, built as a wheel, so its modules load from compiled bytecode as they would for a user;
third-party dependencies come from `.venv` through a `.pth` line. `--dev-venv` measures
`.venv/bin/earshot` instead. Settings select the scripted model from temporary XDG dirs.

Targets: spawn -> `initialize` reply <= 100 ms (median); `session/new` <= 50 ms without MCP
servers; resident memory after `session/new` <= 60 MB; exit <= 100 ms after stdin closes; streamed
text deltas reach stdout at >= 20,000 per second. Measures what the early `session/new` answer
moves elsewhere (the first prompt's wait). `--probe PATH` also runs an external start-up probe
(`acp_probe.py`, kept outside this repository) on the same install and reports its medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from results_md import write_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## acp"
DEV_VENV = ROOT / ".venv"


def build_venv(work: Path) -> Path:
    """A venv with this tree installed from a wheel; returns its `earshot` script."""
    wheels = work / "wheels"
    subprocess.run(
        [str(DEV_VENV / "bin" / "pip"), "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
    )
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    [wheel] = wheels.glob("*.whl")
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    deps = DEV_VENV / "lib" / version / "site-packages"
    (venv / "lib" / version / "site-packages" / "zz_earshot_deps.pth").write_text(
        f"{deps}\n", encoding="utf-8"
    )
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    return venv / "bin" / "earshot"


@dataclass
class Setup:
    earshot: Path
    workspace: Path
    env: dict[str, str]
    """The scripted model answering "ok" (start-up and memory runs)."""
    stream_env: dict[str, str]
    """The scripted model streaming the delta-rate turn."""
    keys_env: dict[str, str]
    """No model configured and four providers with (fake) keys: the model picker lists their
    catalogs (~350 models) and the default model is picked automatically."""


KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY")


def _config(work: Path, name: str, settings: dict[str, Any]) -> Path:
    home = work / name
    (home / "earshot").mkdir(parents=True)
    (home / "earshot" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return home


def _scripted(work: Path, name: str, turn: dict[str, Any]) -> dict[str, Any]:
    script = work / f"{name}.json"
    script.write_text(json.dumps({"turns": [turn]}), encoding="utf-8")
    return {"providers": {"bench": {"api": "scripted", "script": str(script)}}, "model": "bench/x"}


def make_setup(work: Path, earshot: Path, deltas: int) -> Setup:
    workspace = work / "workspace"
    workspace.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base.update(XDG_DATA_HOME=str(work / "data"), HOME=str(work))

    def env(config_home: Path, **extra: str) -> dict[str, str]:
        return {**base, "XDG_CONFIG_HOME": str(config_home), **extra}

    short = _config(work, "config", _scripted(work, "short", {"text": "ok"}))
    stream_turn = {"text": "x" * deltas, "chunk_size": 1}
    stream = _config(work, "config-stream", _scripted(work, "stream", stream_turn))
    keys = _config(work, "config-keys", {})
    return Setup(
        earshot=earshot,
        workspace=workspace,
        env=env(short),
        stream_env=env(stream),
        keys_env=env(keys, **dict.fromkeys(KEY_VARIABLES, "bench-key-not-real")),
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

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.stdin.write((json.dumps(line) + "\n").encode())
        self.stdin.flush()
        return self.next_id

    def until_response(
        self, request_id: int, on_message: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"request {request_id} failed: {message['error']}")
                return message["result"]
            if on_message is not None:
                on_message(message)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        return kb / 1024

    def close(self) -> float:
        """Close stdin; ms until the process exited."""
        started = time.perf_counter()
        self.stdin.close()
        self.process.wait(timeout=10)
        return (time.perf_counter() - started) * 1000


def initialize(agent: Agent) -> float:
    request_id = agent.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    agent.until_response(request_id)
    return (time.perf_counter() - agent.started) * 1000


def new_session(agent: Agent, setup: Setup) -> tuple[str, float]:
    started = time.perf_counter()
    request_id = agent.send("session/new", {"cwd": str(setup.workspace), "mcpServers": []})
    result = agent.until_response(request_id)
    return result["sessionId"], (time.perf_counter() - started) * 1000


def prompt(agent: Agent, session_id: str) -> float:
    """ms from `session/prompt` to its answer."""
    started = time.perf_counter()
    request_id = agent.send(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    agent.until_response(request_id)
    return (time.perf_counter() - started) * 1000


@dataclass
class Run:
    init_ms: float
    new_cold_ms: float
    new_second_ms: float
    first_prompt_ms: float
    new_after_idle_ms: float
    new_keys_ms: float
    rss_mb: float
    exit_ms: float


def one_run(setup: Setup) -> Run:
    agent = Agent(setup)
    init_ms = initialize(agent)
    session_id, cold = new_session(agent, setup)
    _, second = new_session(agent, setup)
    # Sent at once: it waits for the session built behind the early answer.
    first_prompt = prompt(agent, session_id)
    rss = agent.rss_mb()
    exit_ms = agent.close()
    # An editor that opens its session a moment after initialize (the warm-up has finished).
    agent = Agent(setup)
    initialize(agent)
    time.sleep(1.0)
    _, after_idle = new_session(agent, setup)
    agent.close()
    agent = Agent(setup, setup.keys_env)
    initialize(agent)
    _, keys = new_session(agent, setup)
    agent.close()
    return Run(init_ms, cold, second, first_prompt, after_idle, keys, rss, exit_ms)


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
    request_id = agent.send(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    agent.until_response(request_id, count)
    total = time.perf_counter() - started
    agent.close()
    assert len(seen) == deltas, (len(seen), deltas)
    return (len(seen) - 1) / (seen[-1] - seen[0]), total


IMPORT_STEPS = (
    (
        "the early answer: settings, registry, catalog, pickers",
        "acp_server.early_session, earshot.acp_main, agent.settings, providers.registry, "
        "providers.catalog, earshot.compose",
    ),
    ("asyncio + anyio (the event loop)", "asyncio, anyio"),
    ("acp_server.server + jsonrpc", "acp_server.server"),
    ("sessions.store", "sessions.store"),
    ("pydantic", "pydantic"),
    ("agent.session (loop, tools, permissions)", "agent.session"),
    ("earshot.mcp_tools + acp_server.live", "earshot.mcp_tools, acp_server.live"),
)
STEP_CODE = """
import sys, time, json
from acp_server.early import answer_initialize_early
times = []
for name, modules in json.loads(sys.argv[1]):
    started = time.perf_counter()
    exec("import " + modules)
    times.append((time.perf_counter() - started) * 1000)
print(json.dumps(times))
"""


def import_costs(setup: Setup, runs: int = 7) -> list[tuple[str, float]]:
    """What the first `session/new` pays for, step by step: each step imports one more layer
    (minimum over `runs` fresh processes, to see through machine noise)."""
    python = setup.earshot.parent / "python"
    samples: list[list[float]] = []
    for _ in range(runs):
        result = subprocess.run(
            [str(python), "-c", STEP_CODE, json.dumps(IMPORT_STEPS)],
            env=setup.env,
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(json.loads(result.stdout))
    return [(name, min(run[i] for run in samples)) for i, (name, _) in enumerate(IMPORT_STEPS)]


DATACLASS_CODE = """
import dataclasses, json, time
original = dataclasses._process_class
spent = [0, 0.0]
def timed(*args, **kwargs):
    started = time.perf_counter()
    try:
        return original(*args, **kwargs)
    finally:
        spent[0] += 1
        spent[1] += time.perf_counter() - started
dataclasses._process_class = timed
started = time.perf_counter()
import anyio, acp_server.server, earshot.acp_main
import agent.session, agent.settings, earshot.compose, earshot.mcp_tools, acp_server.live
print(json.dumps([spent[0], spent[1] * 1000, (time.perf_counter() - started) * 1000]))
"""


def dataclass_cost(setup: Setup, runs: int = 7) -> tuple[int, float, float]:
    """(dataclasses created, ms creating them, ms importing everything) on the session path,
    from the fresh process with the least total import time."""
    python = setup.earshot.parent / "python"
    samples: list[tuple[int, float, float]] = []
    for _ in range(runs):
        result = subprocess.run(
            [str(python), "-c", DATACLASS_CODE],
            env=setup.env,
            capture_output=True,
            text=True,
            check=True,
        )
        count, spent, total = json.loads(result.stdout)
        samples.append((int(count), float(spent), float(total)))
    return min(samples, key=lambda sample: sample[2])


def probe(setup: Setup, runs: int, probe_path: Path) -> dict[str, Any]:
    result = subprocess.run(
        [
            sys.executable,
            str(probe_path),
            "--runs",
            str(runs),
            "--cwd",
            str(setup.workspace),
            "--",
            str(setup.earshot),
            "--stdio",
        ],
        env=setup.env,
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])["summary"]


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(
    costs: list[tuple[str, float]],
    dataclasses: tuple[int, float, float],
    runs: list[Run],
    rate: float,
    prompt_s: float,
    deltas: int,
    summary: dict[str, Any] | None,
    command: str,
    where: str,
) -> str:
    def row(name: str, values: list[float], target: str, unit: str = "ms") -> str:
        return (
            f"| {name} | {median(values):.1f} {unit} | {min(values):.1f} | {max(values):.1f} "
            f"| {target} |"
        )

    def against(values: list[float], limit: float, unit: str = "ms") -> str:
        return f"<= {limit:g} {unit}: {'met' if median(values) <= limit else 'NOT met'}"

    def probe_value(key: str) -> str:
        value = summary.get(key) if summary is not None else None
        return "n/a" if not isinstance(value, dict) else f"{value['median']}"

    cold = [r.new_cold_ms for r in runs]
    keys = [r.new_keys_ms for r in runs]
    lines = [
        SECTION,
        "",
        f"Command: `{command}`. Server: {where}.",
        f"Machine: CPython {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs. Date: {time.strftime('%Y-%m-%d')}. {len(runs)} runs.",
        "",
        "| measure | median | min | max | target |",
        "| --- | ---: | ---: | ---: | --- |",
        row(
            "spawn -> `initialize` reply",
            [r.init_ms for r in runs],
            against([r.init_ms for r in runs], 100),
        ),
        row("`session/new` right after `initialize` (cold)", cold, against(cold, 50)),
        row(
            "the same with four provider keys and no model set (~350 models listed)",
            keys,
            against(keys, 50),
        ),
        row("a second `session/new` right after the first", [r.new_second_ms for r in runs], ""),
        row(
            "`session/prompt` sent as soon as the cold `session/new` is answered, to its answer",
            [r.first_prompt_ms for r in runs],
            "",
        ),
        row(
            "`session/new` 1 s after `initialize` (warmed up)",
            [r.new_after_idle_ms for r in runs],
            "",
        ),
        row(
            "resident memory after two sessions and a prompt",
            [r.rss_mb for r in runs],
            against([r.rss_mb for r in runs], 60, "MB"),
            "MB",
        ),
        row(
            "exit after stdin closes",
            [r.exit_ms for r in runs],
            against([r.exit_ms for r in runs], 100),
        ),
        "",
        f"Streaming: {deltas:,} one-character text deltas from the scripted model reached stdout "
        f"at **{rate:,.0f} per second** (target >= 20,000; first to last chunk; the whole prompt "
        f"took {prompt_s:.2f} s).",
        "",
        "How the first session is answered: the `initialize` reply is written before asyncio is "
        "even imported, and a `session/new` that follows at once is answered on the same path, "
        "from the settings, the credentials and the catalog (`SessionFactory.plan_new`), before "
        "the session exists (`acp_server.early_session`). The session is then built under the "
        "promised id while the event loop loads, and requests for it wait; a `session/new` that "
        "reaches the event loop before the warm-up has finished is answered the same way. The "
        "first prompt therefore carries the session machinery's load (the prompt row). Import "
        "cost per layer, each step on top of the previous ones (minimum of 7 fresh processes, "
        "same install); only the first row is paid before the `session/new` answer:",
        "",
        "| layer | ms |",
        "| --- | ---: |",
        *(f"| {name} | {ms:.1f} |" for name, ms in costs),
        f"| total | {sum(ms for _, ms in costs):.1f} |",
        "",
        f"Of the {dataclasses[2]:.0f} ms it takes to import the whole session path, "
        f"{dataclasses[1]:.0f} ms is spent creating {dataclasses[0]} dataclasses (about "
        f"{dataclasses[1] / max(dataclasses[0], 1):.2f} ms each on CPython "
        f"{platform.python_version()}: `dataclass` compiles each generated method). The settings "
        "are validated by hand (no pydantic before the first tool runs), the catalog builds a "
        "provider's models at the first question about it, and `sessions.ids` mints the id "
        "without loading the store. Loading asyncio and anyio before the `initialize` reply was "
        "tried: it moves ~30-50 ms from `session/new` to `initialize` and is not done.",
        "",
    ]
    if summary is not None:
        lines += [
            f"`acp_probe.py --runs {summary.get('runs')}` on the same install: init_ms "
            f"{probe_value('init_ms')}, session_new_ms {probe_value('session_new_ms')}, ready_ms "
            f"{probe_value('ready_ms')}, exit_ms {probe_value('exit_ms')}, peak_rss_mb "
            f"{probe_value('peak_rss_mb')}, rss_at_init_mb {probe_value('rss_at_init_mb')}, "
            f"cpu_at_ready_s {probe_value('cpu_at_ready_s')} (medians; init_ok "
            f"{summary.get('init_ok')}/{summary.get('runs')}, session_ok "
            f"{summary.get('session_ok')}, errors {summary.get('errors')}). The probe closes "
            "stdin as soon as `session/new` is answered, while the event loop is still loading "
            "behind the early answer, so its exit time includes that load; the table's exit row "
            "closes after a prompt.",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--dev-venv", action="store_true")
    parser.add_argument(
        "--probe",
        type=Path,
        default=None,
        help="an external acp_probe.py to run on the same install (optional; not in this repo)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="earshot-bench-acp-") as temp:
        work = Path(temp)
        if args.dev_venv:
            earshot, where = DEV_VENV / "bin" / "earshot", "`.venv/bin/earshot` (editable install)"
        else:
            earshot = build_venv(work)
            where = "a fresh venv with this tree installed from its wheel (compiled bytecode)"
        setup = make_setup(work, earshot, args.deltas)
        runs = [one_run(setup) for _ in range(args.runs)]
        rate, prompt_s = delta_rate(setup, args.deltas)
        summary = probe(setup, args.runs, args.probe) if args.probe is not None else None
        costs = import_costs(setup)
        dataclasses = dataclass_cost(setup)
    command = "python bench/acp.py" + (f" --runs {args.runs}" if args.runs != 20 else "")
    text = report(costs, dataclasses, runs, rate, prompt_s, args.deltas, summary, command, where)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
