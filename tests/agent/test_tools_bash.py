from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent.backends import Confinement, OutputSink, ProcessResult, TerminalSink
from agent.tools import ToolError
from agent.tools import bash as bash_module
from agent.tools.bash import bash_tool
from tests.agent.tools_harness import Harness, harness, text_of


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return harness(tmp_path)


async def test_runs_in_the_cwd_and_streams_progress(h: Harness, tmp_path: Path) -> None:
    output = await h.run(bash_tool, command="pwd; echo done >&2")
    assert not output.is_error
    assert text_of(output) == f"{tmp_path.resolve()}\ndone"
    assert "".join(h.progress) == f"{tmp_path.resolve()}\ndone\n"
    assert output.raw_output == {
        "exit_code": 0,
        "timed_out": False,
        "signal": None,
        "truncated": False,
        "terminal_id": None,
    }


async def test_non_zero_exit_is_an_error_with_output(h: Harness) -> None:
    output = await h.run(bash_tool, command="echo partial; exit 7")
    assert output.is_error
    assert text_of(output) == "Command failed with exit code 7.\npartial"


async def test_no_output(h: Harness) -> None:
    assert text_of(await h.run(bash_tool, command="true")) == "(no output)"


async def test_timeout_is_an_error_with_partial_output(h: Harness) -> None:
    output = await h.run(bash_tool, command="echo started; sleep 30", timeout=0.8)
    assert output.is_error
    text = text_of(output)
    assert text.startswith("Command timed out after 0.8s and was killed. Output so far:")
    assert text.endswith("started")


async def test_output_cap_keeps_the_tail_and_says_so(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_module, "OUTPUT_LIMIT_BYTES", 50)
    output = await h.run(bash_tool, command="seq 1 1000")
    text = text_of(output)
    assert "[Output truncated: showing only the last 50 bytes.]" in text
    assert text.endswith("\n1000")
    assert "\n1\n" not in text


async def test_timeout_bounds_and_permission(h: Harness) -> None:
    with pytest.raises(ValidationError):
        bash_tool.input_model.model_validate({"command": "ls", "timeout": 601})
    request = h.permission(bash_tool, command="npm test && rm -rf build")
    assert request.rule_tool == "Bash"
    assert request.command == "npm test && rm -rf build"
    # The title is the exact command the user approves, the description after it.
    assert h.ui(bash_tool, command="npm test", description="Run tests").title == (
        "npm test  # Run tests"
    )
    assert h.ui(bash_tool, command="npm   test").kind == "execute"
    assert h.ui(bash_tool, command="npm   test").title == "npm   test"


async def test_editor_terminal_backend_is_used(h: Harness) -> None:
    calls: list[dict[str, object]] = []

    class EditorTerminal:
        async def run(
            self,
            command: str,
            *,
            cwd: Path,
            timeout: float,
            output_limit: int,
            env: Mapping[str, str] | None = None,
            on_output: OutputSink | None = None,
            on_terminal: TerminalSink | None = None,
            confine: Confinement | None = None,
        ) -> ProcessResult:
            calls.append({"command": command, "cwd": cwd, "timeout": timeout})
            assert on_terminal is not None
            await on_terminal("term-1")
            return ProcessResult(exit_code=0, output="ok\n", terminal_id="term-1")

    h.ctx.processes = EditorTerminal()
    output = await h.run(bash_tool, command="make", timeout=5)
    assert text_of(output) == "ok"
    assert h.terminals == ["term-1"]
    assert calls[0]["timeout"] == 5
    assert calls[0]["cwd"] == h.ctx.cwd


async def test_missing_bash_is_a_clear_error(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(h.ctx.processes, "shell", "/nonexistent/bash")
    with pytest.raises(ToolError, match="bash must be installed"):
        await h.run(bash_tool, command="true")


async def test_missing_working_directory_is_named(tmp_path: Path) -> None:
    h = harness(tmp_path / "gone")
    with pytest.raises(ToolError, match="no longer exists"):
        await h.run(bash_tool, command="true")
