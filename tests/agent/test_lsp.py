"""LSP diagnostics after an edit: against a real server (`ruff server`, installed with the test
dependencies) and a scripted one for the edge cases (tests/agent/lsp_fake_server.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from agent.lsp import LspManager
from agent.lsp.client import ServerConfig

FAKE = Path(__file__).with_name("lsp_fake_server.py")
RUFF = Path(sys.executable).with_name("ruff")
BOUND = 20.0
"""No test waits longer than this for anything: each case is bounded well below it."""


def fake(mode: str, *, delay: float = 0.0, timeout: float = 5.0) -> ServerConfig:
    return ServerConfig(
        name="fake",
        command=sys.executable,
        args=(str(FAKE), mode, str(delay)),
        extensions=(".txt",),
        timeout=timeout,
        startup_timeout=10.0,
    )


def ruff() -> ServerConfig:
    return ServerConfig(name="ruff", command=str(RUFF), args=("server",), extensions=(".py",))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n")
    return tmp_path


# ----------------------------------------------------------------------- a real server


async def test_ruff_reports_the_error_an_edit_introduces(workspace: Path) -> None:
    path = workspace / "app.py"
    old = "import os\n\nprint(os.getcwd())\n"
    path.write_text(old)
    with anyio.fail_after(BOUND):
        async with LspManager([ruff()], workspace) as lsp:
            result = await lsp.diagnostics_after_edit(path, old, old + "value = (\n")
    assert result.notes == ()
    assert len(result.introduced) == 1
    assert result.introduced[0].startswith("app.py:5:")
    assert "error[invalid-syntax]" in result.introduced[0]
    text = result.text()
    assert text is not None and "problems this edit introduced" in text


async def test_ruff_reports_nothing_for_a_clean_edit(workspace: Path) -> None:
    path = workspace / "app.py"
    old = "import os\n\nprint(os.getcwd())\n"
    with anyio.fail_after(BOUND):
        async with LspManager([ruff()], workspace) as lsp:
            result = await lsp.diagnostics_after_edit(path, old, old + "print('more')\n")
    assert result.introduced == () and result.notes == ()
    assert result.text() is None


async def test_ruff_does_not_report_the_files_old_problems(workspace: Path) -> None:
    path = workspace / "app.py"
    old = "import json\nimport os\n\nprint(undefined_before)\n"
    with anyio.fail_after(BOUND):
        async with LspManager([ruff()], workspace) as lsp:
            clean = await lsp.diagnostics_after_edit(path, old, old + "print(os.sep)\n")
            assert clean.introduced == ()
            new = old + "print(os.sep)\nprint(undefined_after)\n"
            worse = await lsp.diagnostics_after_edit(path, old + "print(os.sep)\n", new)
    assert len(worse.introduced) == 1
    assert "undefined_after" in worse.introduced[0]
    assert "F821" in worse.introduced[0]


# ----------------------------------------------------------------------- a scripted server


@pytest.mark.parametrize("mode", ["push", "pull", "unversioned"])
async def test_new_problems_are_reported_and_old_ones_are_not(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "notes.txt"
    old = "fine\nBROKEN already\n"
    new = "fine\nBROKEN already\nBROKEN again\nSHAKY too\n"
    with anyio.fail_after(BOUND):
        async with LspManager([fake(mode)], tmp_path) as lsp:
            result = await lsp.diagnostics_after_edit(path, old, new)
            errors_only = LspManager([fake(mode)], tmp_path, min_severity="error")
            async with errors_only:
                strict = await errors_only.diagnostics_after_edit(path, old, new)
    assert result.notes == ()
    assert result.introduced == (
        "notes.txt:3:1: error[B1] broken line (fake)",
        "notes.txt:4:1: warning[S1] shaky (fake)",
    )
    assert strict.introduced == ("notes.txt:3:1: error[B1] broken line (fake)",)


async def test_a_second_edit_starts_from_the_first_ones_diagnostics(tmp_path: Path) -> None:
    path = Path("notes.txt")  # relative: to the workspace root
    with anyio.fail_after(BOUND):
        async with LspManager([fake("push")], tmp_path) as lsp:
            first = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
            second = await lsp.diagnostics_after_edit(path, "a\nBROKEN\n", "b\nBROKEN\n")
            fixed = await lsp.diagnostics_after_edit(path, "b\nBROKEN\n", "b\n")
    assert len(first.introduced) == 1
    assert second.introduced == () and fixed.introduced == ()


async def test_a_slow_server_is_bounded_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    with anyio.fail_after(BOUND):
        async with LspManager([fake("slow", delay=60, timeout=0.5)], tmp_path) as lsp:
            result = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
    assert result.introduced == ()
    assert result.notes == (
        "the fake language server did not answer within 0.5s while checking the edit",
    )


async def test_a_server_that_never_publishes_is_bounded_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    with anyio.fail_after(BOUND):
        async with LspManager([fake("silent", timeout=0.5)], tmp_path) as lsp:
            result = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
    assert "did not answer within 0.5s" in result.notes[0]


async def test_a_crashing_server_is_reported_restarted_once_then_left_alone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.txt"
    with anyio.fail_after(BOUND):
        async with LspManager([fake("crash")], tmp_path) as lsp:
            first = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
            second = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
            third = await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
            assert lsp.running() == {}
    assert first.notes[0].startswith("the fake language server stopped while checking the edit")
    assert "exit code 3" in first.notes[0] or "internal error" in first.notes[0]
    assert "fake: internal error, giving up" in first.notes[0]
    assert second.notes[0].endswith("it will not be started again in this session")
    assert third == type(third)()


async def test_a_server_that_dies_at_start_is_reported(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        async with LspManager([fake("dead")], tmp_path) as lsp:
            result = await lsp.diagnostics_after_edit(tmp_path / "a.txt", "", "BROKEN")
    assert result.notes[0].startswith("the fake language server stopped while starting")
    assert "fake: cannot start" in result.notes[0]


async def test_a_server_speaking_garbage_is_reported(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        async with LspManager([fake("garbage")], tmp_path) as lsp:
            result = await lsp.diagnostics_after_edit(tmp_path / "a.txt", "a", "BROKEN")
    assert result.notes[0].startswith("the fake language server stopped while checking the edit")


async def test_a_missing_program_is_reported(tmp_path: Path) -> None:
    missing = ServerConfig(
        name="nope", command=str(tmp_path / "no-such-server"), extensions=(".txt",)
    )
    async with LspManager([missing], tmp_path) as lsp:
        result = await lsp.diagnostics_after_edit(tmp_path / "a.txt", "", "x")
    assert result.notes[0].startswith("the nope language server could not start")


async def test_files_no_server_checks_are_not_sent_anywhere(tmp_path: Path) -> None:
    async with LspManager([fake("push")], tmp_path) as lsp:
        result = await lsp.diagnostics_after_edit(tmp_path / "a.rs", "", "BROKEN")
        assert lsp.running() == {}
    assert result.text() is None


async def test_servers_start_lazily_and_are_gone_when_the_session_closes(tmp_path: Path) -> None:
    with anyio.fail_after(BOUND):
        async with LspManager([fake("push")], tmp_path) as lsp:
            assert lsp.running() == {}
            await lsp.diagnostics_after_edit(tmp_path / "a.txt", "", "x")
            pid = lsp.running()["fake"].pid
            assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_cancelled_check_leaves_the_manager_usable(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    with anyio.fail_after(BOUND):
        async with LspManager([fake("slow", delay=0.2, timeout=5)], tmp_path) as lsp:
            with anyio.move_on_after(0.05):
                await lsp.diagnostics_after_edit(path, "a\n", "a\nBROKEN\n")
            result = await lsp.diagnostics_after_edit(path, "a\nBROKEN\n", "c\nBROKEN\nBROKEN\n")
    assert result.notes == ()
    assert result.introduced == ("notes.txt:3:1: error[B1] broken line (fake)",)


def test_the_lsp_modules_load_no_protocol_types_until_a_server_starts() -> None:
    import json
    import subprocess

    code = (
        "import sys, json\n"
        "import agent.lsp.manager, agent.settings.code, agent.code.verify\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('lsprotocol', 'cattrs', "
        "'pathspec')))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert json.loads(result.stdout) == []
