"""What checking an edit costs a session; writes the `## edit checks` section of bench/RESULTS.md.

Run from the repo root as a module: `.venv/bin/python -m bench.edit_checks` (`--no-write` only
prints). A session on the scripted model writes a Python file `EDITS` times in one turn, each
write its own batch, with: no checks; the `lsp` setting (`ruff server`); the `verify` setting
(`ruff check {files}`); both. Reported per edit (the turn's wall time over the edits, the first
edit, which starts the server, apart), plus the background command round trip (start,
`bash_output` with a wait, `bash_kill`). The sandbox is whatever this machine has (bubblewrap
on Linux), as in a real session.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from agent.events import ToolCallFinished
from agent.session import SessionOptions, create_session
from agent.settings import CodeConfig, LspServerSettings, Settings, VerifyRule
from agent.tasks import SessionTasks
from bench.results_md import write_section
from providers.types import JsonValue
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore

SECTION = "## edit checks"
EDITS = 20
RUFF = str(Path(sys.executable).with_name("ruff"))


def _write(index: int) -> ScriptedTurn:
    # A new file each time (`write` replaces only a file it read); every other one is broken.
    broken = "(" if index % 2 else ""
    content = f"import os\n\nVALUE_{index} = os.getcwd(){broken}\n"
    arguments: dict[str, JsonValue] = {"path": f"app_{index}.py", "content": content}
    return ScriptedTurn(
        tool_calls=[ScriptedCall(name="write", arguments=arguments, id=f"w{index}")]
    )


def _call(name: str, arguments: dict[str, JsonValue], call_id: str) -> ScriptedTurn:
    return ScriptedTurn(tool_calls=[ScriptedCall(name=name, arguments=arguments, id=call_id)])


async def _edits(root: Path, code: CodeConfig, case: str) -> tuple[float, float, int]:
    """(first edit, median of the others) in ms, the time from one call finishing to the next,
    and how many results the checks added to."""
    model = ScriptedModel([*(_write(i) for i in range(EDITS)), ScriptedTurn(text="done")])
    project = root / case
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.ruff]\n")
    marks: list[float] = []
    findings = 0
    async with SessionTasks() as tasks:  # the session's block: its language servers run there
        session = await create_session(
            store=SessionStore(root / "data" / "sessions"),
            cwd=project,
            options=SessionOptions(model_name="scripted/bench", mode="yolo"),
            model_factory=lambda name: model,
            settings=Settings(code=code),
            data_dir=root / "data",
            tasks=tasks,
        )
        marks.append(time.perf_counter())
        async for event in session.run_turn("go"):
            if isinstance(event, ToolCallFinished):
                marks.append(time.perf_counter())
                findings += "\n" in event.result.text
    gaps = [(b - a) * 1000 for a, b in zip(marks, marks[1:], strict=False)]
    return gaps[0], statistics.median(gaps[1:]), findings


async def _background(root: Path) -> float:
    model = ScriptedModel(
        [
            _call("bash", {"command": "echo up; sleep 300 & wait", "background": True}, "s"),
            _call("bash_output", {"handle": "bg1", "wait": 30}, "o"),
            _call("bash_kill", {"handle": "bg1"}, "k"),
            ScriptedTurn(text="done"),
        ]
    )
    session = await create_session(
        store=SessionStore(root / "data" / "sessions"),
        cwd=root / "project",
        options=SessionOptions(model_name="scripted/bench", mode="yolo"),
        model_factory=lambda name: model,
        settings=Settings(),
        data_dir=root / "data",
    )
    started = time.perf_counter()
    try:
        async for _ in session.run_turn("go"):
            pass
    finally:
        await session.aclose()
    return (time.perf_counter() - started) * 1000


async def main(write: bool) -> None:
    lsp = {"ruff": LspServerSettings(command=RUFF, args=["server"], extensions=[".py"])}
    verify = (VerifyRule(files="*.py", command=f"{RUFF} check --no-cache {{files}}"),)
    cases = {
        "no checks": CodeConfig(),
        "`lsp`: ruff server": CodeConfig(lsp=lsp),
        "`verify`: ruff check": CodeConfig(verify=verify),
        "both": CodeConfig(verify=verify, lsp=lsp),
    }
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / "project").mkdir()
        await _edits(root, CodeConfig(), "warm")  # tool modules, the sandbox probe
        for number, (name, code) in enumerate(cases.items()):
            first, median, findings = await _edits(root, code, f"case{number}")
            rows.append(f"| {name} | {first:.0f} ms | {median:.0f} ms | {findings} |")
        background = statistics.median([await _background(root) for _ in range(5)])
    load = os.getloadavg()[0]
    body = "\n".join(
        [
            SECTION,
            "",
            f"`python -m bench.edit_checks` on CPython {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, load average {load:.1f} at the end. One turn of "
            f"{EDITS} `write` calls, each creating a small Python file (every other one "
            "broken), each its own batch, through a whole session (gate, sandbox, executor); "
            "the time from one call's end to the next's (the scripted model's own part is the "
            "`no checks` row).",
            "",
            "| settings | first edit (starts the server) | later edits: median | results "
            "with findings |",
            "|---|---|---|---|",
            *rows,
            "",
            "Background command round trip (`bash` with `background: true`, `bash_output` "
            f"waiting for its first line, `bash_kill`), median of 5 turns: {background:.0f} ms.",
        ]
    )
    print(body)
    if write:
        write_section(SECTION, body)


if __name__ == "__main__":
    anyio.run(main, "--no-write" not in sys.argv)
