"""A `ToolContext` over real local backends, and a scripted user, for the built-in tool tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.backends import (
    PermissionAnswer,
    PermissionPrompt,
    Question,
    QuestionAnswer,
    ToolUi,
)
from agent.events import TodoItem
from agent.files import FileId
from agent.local import LocalFiles, LocalProcesses
from agent.tools import (
    AnyTool,
    PermissionRequest,
    ReadTracker,
    ScopeContract,
    ToolContext,
    ToolOutput,
    ToolServices,
)
from providers.types import TextPart


@dataclass
class ScriptedUser:
    """Answers questions from a list; records what it was asked."""

    answers: list[QuestionAnswer] = field(default_factory=lambda: [])
    asked: list[Question] = field(default_factory=lambda: [])

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        raise AssertionError("tools never ask for permission themselves")

    async def ask_question(self, question: Question) -> QuestionAnswer:
        self.asked.append(question)
        return self.answers.pop(0) if self.answers else QuestionAnswer(declined=True)


@dataclass
class Harness:
    ctx: ToolContext
    user: ScriptedUser
    progress: list[str]
    terminals: list[str]
    plans: list[tuple[TodoItem, ...]]

    async def run(self, tool: AnyTool, **arguments: Any) -> ToolOutput:
        params = tool.input_model.model_validate(arguments)
        return await tool.execute(params, self.ctx)

    def ui(self, tool: AnyTool, **arguments: Any) -> ToolUi:
        return tool.ui(tool.input_model.model_validate(arguments), self.ctx)

    def permission(self, tool: AnyTool, **arguments: Any) -> PermissionRequest:
        assert tool.permission is not None
        return tool.permission(tool.input_model.model_validate(arguments), self.ctx)


def harness(cwd: Path, *, roots: tuple[Path, ...] = ()) -> Harness:
    cwd = cwd.resolve()
    user = ScriptedUser()
    progress: list[str] = []
    terminals: list[str] = []
    plans: list[tuple[TodoItem, ...]] = []

    async def on_progress(text: str) -> None:
        progress.append(text)

    async def on_terminal(terminal_id: str) -> None:
        terminals.append(terminal_id)

    async def on_plan(entries: tuple[TodoItem, ...]) -> None:
        plans.append(entries)

    ctx = ToolContext(
        session_id="session-1",
        call_id="call-1",
        cwd=cwd,
        roots=(cwd, *(root.resolve() for root in roots)),
        files=LocalFiles(),
        processes=LocalProcesses(),
        interaction=user,
        scope=ScopeContract(),
        reads=ReadTracker(),
        progress=on_progress,
        terminal=on_terminal,
        # Every path visible: the tests of the `Read` checks give the gate's own.
        services=ToolServices(read_denied=nothing_denied, todos=on_plan),
    )
    return Harness(ctx=ctx, user=user, progress=progress, terminals=terminals, plans=plans)


def nothing_denied(path: Path, file: FileId | None = None) -> bool:
    """A read check that denies nothing (a missing one denies everything)."""
    return False


def text_of(output: ToolOutput) -> str:
    return "\n".join(part.text for part in output.content if isinstance(part, TextPart))
