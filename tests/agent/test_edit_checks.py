"""Edits that check themselves, in a session with the scripted model: the verify commands and
the language server (`ruff server` and `ruff check`, installed with the test dependencies) add
their findings to a broken edit's result and nothing to a clean one; a verify command goes
through the permission gate once per session."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from agent.backends import Mode, PermissionAnswer, PermissionPrompt, Question, QuestionAnswer
from agent.code import EditChecks
from agent.events import AgentEvent, ToolCallFinished
from agent.session import AgentSession, SessionOptions, create_session
from agent.settings import CodeConfig, LspServerSettings, Settings, VerifyRule
from agent.tasks import SessionTasks
from providers.types import JsonValue
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn
from sessions import SessionStore
from tests.agent.loop_support import of

RUFF = Path(sys.executable).with_name("ruff")
CLEAN = "import os\n\nprint(os.getcwd())\n"
BROKEN = "import os\n\nprint(os.getcwd(\n"


@dataclass
class User:
    """Allows once whatever is asked, and keeps the prompts."""

    prompts: list[PermissionPrompt] = field(default_factory=lambda: [])

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        allow = next(o for o in prompt.options if o.kind == "allow_once")
        return PermissionAnswer(option_id=allow.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


def write(path: str, content: str, call_id: str) -> ScriptedTurn:
    arguments: dict[str, JsonValue] = {"path": path, "content": content}
    return ScriptedTurn(tool_calls=[ScriptedCall(name="write", arguments=arguments, id=call_id)])


def code(*, verify: bool = True, lsp: bool = True) -> CodeConfig:
    return CodeConfig(
        verify=(VerifyRule(files="*.py", command=f"{RUFF} check --no-cache {{files}}"),)
        if verify
        else (),
        lsp={"ruff": LspServerSettings(command=str(RUFF), args=["server"], extensions=[".py"])}
        if lsp
        else {},
    )


@asynccontextmanager
async def session(
    project: Path, turns: Sequence[ScriptedTurn], *, config: CodeConfig, mode: Mode, user: User
) -> AsyncGenerator[AgentSession]:
    """A session in its block (its language servers run there), closed at the block's end."""
    model = ScriptedModel([*turns, ScriptedTurn(text="done")])
    async with SessionTasks() as tasks:
        yield await create_session(
            store=SessionStore(project.parent / "data" / "sessions"),
            cwd=project,
            options=SessionOptions(model_name="scripted/test", mode=mode),
            model_factory=lambda name: model,
            settings=Settings(code=config),
            interaction=user,
            data_dir=project.parent / "data",
            tasks=tasks,
        )


async def run(agent: AgentSession) -> list[ToolCallFinished]:
    with anyio.fail_after(60):
        events: list[AgentEvent] = [event async for event in agent.run_turn("go")]
    return of(ToolCallFinished, events)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.ruff]\n")
    return root


async def test_a_broken_edit_gets_the_verify_and_lsp_output_in_its_result(project: Path) -> None:
    user = User()
    async with session(
        project, [write("app.py", BROKEN, "w1")], config=code(), mode="yolo", user=user
    ) as agent:
        [finished] = await run(agent)
    text = finished.result.text
    assert finished.result.tool_call_id == "w1"
    assert "The language server reports problems this edit introduced" in text
    assert "app.py:3:" in text
    assert "check --no-cache app.py` failed (exit code 1)" in text
    assert user.prompts == []


async def test_a_clean_edit_gets_nothing_appended(project: Path) -> None:
    user = User()
    async with session(
        project, [write("app.py", CLEAN, "w1")], config=code(), mode="yolo", user=user
    ) as agent:
        [finished] = await run(agent)
    assert finished.status == "completed"
    assert "language server" not in finished.result.text
    assert "Verify" not in finished.result.text
    assert (project / "app.py").read_text() == CLEAN


async def test_verify_runs_after_the_batchs_last_edit_only(project: Path) -> None:
    batch = ScriptedTurn(
        tool_calls=[
            ScriptedCall(name="write", arguments={"path": "a.py", "content": BROKEN}, id="w1"),
            ScriptedCall(name="write", arguments={"path": "b.py", "content": CLEAN}, id="w2"),
        ]
    )
    async with session(project, [batch], config=code(lsp=False), mode="yolo", user=User()) as agent:
        first, second = await run(agent)
    assert "Verify" not in first.result.text
    # One command for the whole batch, naming both files; the failure is about a.py.
    assert "check --no-cache a.py b.py` failed" in second.result.text
    assert "a.py:3:" in second.result.text


async def test_the_gate_asks_once_for_a_configured_verify_command(project: Path) -> None:
    user = User()
    turns = [write("a.py", BROKEN, "w1"), write("b.py", BROKEN, "w2")]
    async with session(
        project, turns, config=code(lsp=False), mode="accept-edits", user=user
    ) as agent:
        first, second = await run(agent)
    verify_prompts = [p for p in user.prompts if "check --no-cache" in str(p.raw_input)]
    assert len(verify_prompts) == 1
    assert "a.py` failed" in first.result.text
    assert "b.py` failed" in second.result.text


async def test_a_refused_verify_command_is_said_once_and_skipped(project: Path) -> None:
    turns = [write("a.py", BROKEN, "w1"), write("b.py", BROKEN, "w2")]

    @dataclass
    class Refuser(User):
        async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
            self.prompts.append(prompt)
            reject = next(o for o in prompt.options if o.kind == "reject_once")
            return PermissionAnswer(option_id=reject.id)

    user = Refuser()
    async with session(
        project, turns, config=code(lsp=False), mode="accept-edits", user=user
    ) as agent:
        first, second = await run(agent)
    assert len(user.prompts) == 1
    assert "was not allowed to run" in first.result.text
    assert "failed" not in first.result.text
    assert "Verify" not in second.result.text and "not allowed" not in second.result.text


async def test_the_language_server_stays_for_the_session_and_stops_with_it(
    project: Path,
) -> None:
    model = ScriptedModel(
        [
            write("a.py", CLEAN, "w1"),
            ScriptedTurn(text="one"),
            write("b.py", BROKEN, "w2"),
            ScriptedTurn(text="two"),
        ]
    )
    async with SessionTasks() as tasks:
        agent = await create_session(
            store=SessionStore(project.parent / "data" / "sessions"),
            cwd=project,
            options=SessionOptions(model_name="scripted/test", mode="yolo"),
            model_factory=lambda name: model,
            settings=Settings(code=code(verify=False)),
            data_dir=project.parent / "data",
            tasks=tasks,
        )
        checks = agent_checks(agent)
        await run(agent)
        [pid] = checks.server_pids().values()
        assert pid is not None and alive(pid)  # between turns
        [finished] = await run(agent)
        assert "introduced:\nb.py:" in finished.result.text
        assert list(checks.server_pids().values()) == [pid]  # the same process
    assert not alive(pid)  # the block's end closed the session


def agent_checks(agent: AgentSession) -> EditChecks:
    checks = agent._setup.checks  # pyright: ignore[reportPrivateUsage]
    assert isinstance(checks, EditChecks)
    return checks


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_an_untrusted_repositorys_verify_and_lsp_run_nothing_in_a_session(
    tmp_path: Path,
) -> None:
    # The attack: a cloned repository's own settings propose commands that would run at the
    # first edit. Untrusted, an edit runs neither; trusted, the same settings do (the control).
    import json

    from agent.settings import load_settings, set_directory_trust

    for trusted in (False, True):
        root = tmp_path / ("trusted" if trusted else "untrusted")
        project, config_home = root / "project", root / "config"
        (project / ".earshot").mkdir(parents=True)
        (config_home / "earshot").mkdir(parents=True)
        marker, server_marker = project / "pwned-by-verify", project / "pwned-by-lsp"
        proposed = {
            "verify": [{"files": "*.py", "command": f"touch {marker}"}],
            "lsp": {
                "evil": {"command": "sh", "args": ["-c", f"touch {server_marker}"],
                         "extensions": [".py"]}
            },
        }  # fmt: skip
        (project / ".earshot" / "settings.json").write_text(json.dumps(proposed))
        if trusted:
            set_directory_trust(project, True, config_home=config_home)
        settings = load_settings(project, environ={}, config_home=config_home)
        model = ScriptedModel([write("app.py", CLEAN, "w1"), ScriptedTurn(text="done")])
        async with SessionTasks() as tasks:
            agent = await create_session(
                store=SessionStore(root / "data" / "sessions"),
                cwd=project,
                options=SessionOptions(model_name="scripted/test", mode="yolo"),
                model_factory=lambda name, model=model: model,
                settings=settings,
                data_dir=root / "data",
                tasks=tasks,
            )
            [finished] = await run(agent)
        assert finished.status == "completed"
        assert marker.exists() == trusted
        assert server_marker.exists() == trusted


async def test_a_turn_cancelled_during_verify_still_reports_the_edit_as_made(
    project: Path,
) -> None:
    fifo = project / "verify-started"
    os.mkfifo(fifo)
    # The verify command says it started (through the FIFO), then outlasts the test.
    config = CodeConfig(verify=(VerifyRule(files="*.py", command=f"echo go > {fifo}; sleep 60"),))
    async with session(
        project, [write("app.py", CLEAN, "w1")], config=config, mode="yolo", user=User()
    ) as agent:
        events: list[AgentEvent] = []
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def consume() -> None:
                    events.extend([event async for event in agent.run_turn("go")])

                group.start_soon(consume)
                # verify is running (abandoned if it never starts: the deadline still holds)
                await anyio.to_thread.run_sync(fifo.read_text, abandon_on_cancel=True)
                agent.cancel()
    [finished] = of(ToolCallFinished, events)
    assert finished.status == "completed"
    assert finished.result.text.startswith("Created app.py")
    assert "interrupted" not in finished.result.text
    assert (project / "app.py").read_text() == CLEAN
