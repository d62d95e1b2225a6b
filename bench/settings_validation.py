"""What validating the settings costs on the way to `session/new`: earshot's own validator
(`agent.settings.schema`) against the same schema as pydantic models, each against a bare Python
start in the same run.

    .venv/bin/python bench/settings_validation.py [--runs 15]

Each case runs in a fresh subprocess, the cases taking turns so that load on the machine hits all
of them alike. Two clocks per run: the child's CPU time (user + system, `getrusage`), which is
what start-up costs on an idle machine, and the time spent inside the child on the case itself
(wall). Medians are printed; nothing is written (the decision it supports is recorded in
`agent/settings/schema.py`).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PYDANTIC_SCHEMA = """
from typing import Annotated, Literal
from pydantic import BaseModel, ConfigDict, Field, SecretStr

class Base(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)

class StreamTimeouts(Base):
    first_event: Annotated[float, Field(gt=0)] | None = Field(None, alias="firstEvent")
    idle: Annotated[float, Field(gt=0)] | None = None

class Provider(Base):
    api: Literal["openai-chat", "openai-responses", "anthropic", "gemini", "scripted"] | None = None
    base_url: str | None = Field(None, alias="baseUrl")
    api_key_env: str | None = Field(None, alias="apiKeyEnv")
    api_key: SecretStr | None = Field(None, alias="apiKey")
    headers: dict[str, str] = {}
    script: str | None = None
    stream_timeouts: StreamTimeouts | None = Field(None, alias="streamTimeouts")

class Cost(Base):
    input: Annotated[float, Field(ge=0)] | None = None
    output: Annotated[float, Field(ge=0)] | None = None
    cache_read: Annotated[float, Field(ge=0)] | None = Field(None, alias="cacheRead")
    cache_write: Annotated[float, Field(ge=0)] | None = Field(None, alias="cacheWrite")

class ModelSettings(Base):
    name: str | None = None
    context_window: Annotated[int, Field(gt=0)] | None = Field(None, alias="contextWindow")
    max_output: Annotated[int, Field(gt=0)] | None = Field(None, alias="maxOutput")
    vision: bool | None = None
    reasoning: bool | None = None
    tool_call: bool | None = Field(None, alias="toolCall")
    cost: Cost | None = None

class Permissions(Base):
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []

class Stdio(Base):
    type: Literal["stdio"] = "stdio"
    command: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None

class Http(Base):
    type: Literal["http", "sse"]
    url: str
    headers: dict[str, str] = {}

class Hook(Base):
    matcher: str | None = None
    command: str
    timeout: Annotated[float, Field(gt=0)] | None = None

class Hooks(Base):
    pre_tool_use: list[Hook] = []
    post_tool_use: list[Hook] = []
    user_prompt_submit: list[Hook] = []
    stop: list[Hook] = []

class Sandbox(Base):
    enabled: bool | None = None
    network: bool | None = None
    writable_paths: list[str] = Field([], alias="writablePaths")

class SettingsFile(Base):
    schema_: str | None = Field(None, alias="$schema")
    model: str | None = None
    mode: Literal["plan", "ask", "accept-edits", "auto", "yolo"] | None = None
    providers: dict[str, Provider] = {}
    models: dict[str, ModelSettings] = {}
    permissions: Permissions = Permissions()
    mcp_servers: dict[str, Stdio | Http] = Field({}, alias="mcpServers")
    hooks: Hooks = Hooks()
    sandbox: Sandbox = Sandbox()
    trusted_directories: list[str] = Field([], alias="trustedDirectories")
    stream_timeouts: StreamTimeouts | None = Field(None, alias="streamTimeouts")

SettingsFile.model_validate_json(open(PATH, encoding="utf-8").read())
"""

SETTINGS = {
    "model": "anthropic/claude-sonnet-4-5",
    "mode": "ask",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "providers": {"local": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:1/v1"}},
    "models": {"local/m": {"contextWindow": 32000}},
}

TIMED = "import time\n_t = time.perf_counter()\n{body}\nprint((time.perf_counter() - _t) * 1000)\n"


def cases(project: Path, config: Path, settings_file: Path) -> dict[str, str]:
    hand = (
        "from pathlib import Path\nimport agent.settings.scopes\n"
        f"agent.settings.scopes.load_settings(Path({str(project)!r}), environ={{}}, "
        f"config_home=Path({str(config)!r}))"
    )
    pydantic = f"PATH = {str(settings_file)!r}\n" + PYDANTIC_SCHEMA
    return {
        "python -c pass": "pass",
        "agent.settings.scopes: import + load": TIMED.format(body=hand),
        "pydantic models: import + define + validate": TIMED.format(body=pydantic),
        "pydantic models, pydantic already imported": (
            "import pydantic.main, pydantic.fields\n" + TIMED.format(body=pydantic)
        ),
    }


def run(code: str) -> tuple[float, float]:
    """(the child's CPU ms, the ms it printed: its own timing of the case; 0 for none)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return cpu, float(out[-1]) if out else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / ".earshot").mkdir(parents=True)
        settings_file = project / ".earshot" / "settings.json"
        settings_file.write_text(json.dumps(SETTINGS), encoding="utf-8")
        config = Path(tmp) / "config"
        measured: dict[str, list[tuple[float, float]]] = {}
        named = cases(project, config, settings_file)
        for _ in range(args.runs):
            for name, code in named.items():
                measured.setdefault(name, []).append(run(code))
    base = statistics.median(cpu for cpu, _ in measured["python -c pass"])
    print(f"{'case':48} {'CPU ms':>8} {'x pass':>7} {'in-case ms':>11}")
    for name, values in measured.items():
        cpu = statistics.median(c for c, _ in values)
        inside = statistics.median(i for _, i in values)
        print(f"{name:48} {cpu:8.1f} {cpu / base:7.2f} {inside:11.1f}")


if __name__ == "__main__":
    main()
