"""Shared pieces for the loop, session and task tests: a session on a scripted model, test
tools that coordinate through anyio events, and interactions that answer or hang."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, field_validator

from agent.backends import (
    Interaction,
    PermissionAnswer,
    PermissionOptionKind,
    PermissionPrompt,
    Question,
    QuestionAnswer,
    ToolUi,
)
from agent.events import AgentEvent
from agent.session import AgentSession, SessionOptions, create_session
from agent.tools import (
    AnyTool,
    PermissionRequest,
    ToolContext,
    ToolError,
    ToolOutput,
    define_tool,
)
from providers.catalog import ModelCatalog
from providers.model import Model
from providers.types import Message, ModelRequest, StreamEvent, ToolCallPart, ToolResultPart
from providers.wire.scripted import ScriptedModel, TurnSpec
from sessions import SessionStore


async def collect(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    with anyio.fail_after(10):
        return [event async for event in events]


def of(kind: type[Any], events: Sequence[AgentEvent]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


@dataclass
class Env:
    tmp: Path
    store: SessionStore
    cwd: Path
    data: Path


def env(tmp_path: Path) -> Env:
    cwd = tmp_path / "project"
    cwd.mkdir(parents=True, exist_ok=True)
    data = tmp_path / "data"
    return Env(tmp=tmp_path, store=SessionStore(data / "sessions"), cwd=cwd, data=data)


async def make_session(
    where: Env,
    model: Model | Sequence[TurnSpec],
    *,
    tools: Sequence[AnyTool] = (),
    interaction: Interaction | None = None,
    catalog: ModelCatalog | None = None,
    factory: Callable[[str], Model] | None = None,
    resume_id: str | None = None,
    builtin: bool = False,
    **options: Any,
) -> AgentSession:
    scripted = model if isinstance(model, Model) else ScriptedModel(list(model))
    options.setdefault("model_name", "scripted/test")
    options.setdefault("retry_base_delay", 0.001)
    options.setdefault("retry_max_delay", 0.05)
    return await create_session(
        store=where.store,
        cwd=where.cwd,
        options=SessionOptions(extra_tools=tools, builtin_tools=builtin, **options),
        model_factory=factory or (lambda name: scripted),
        catalog=catalog,
        interaction=interaction,
        resume_id=resume_id,
        data_dir=where.data,
    )


def results_of(history: Sequence[Message]) -> dict[str, ToolResultPart]:
    return {
        part.tool_call_id: part
        for message in history
        if message.role == "tool"
        for part in message.parts
        if isinstance(part, ToolResultPart)
    }


def assert_every_call_answered(history: Sequence[Message]) -> None:
    """The transcript invariant: each assistant call is answered, in order, by the next message."""
    for index, message in enumerate(history):
        calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
        if not calls:
            continue
        assert index + 1 < len(history), "calls at the end of history have no results"
        answer = history[index + 1]
        assert answer.role == "tool"
        ids = [p.tool_call_id for p in answer.parts if isinstance(p, ToolResultPart)]
        assert ids == [call.id for call in calls]


# ----------------------------------------------------------------------------- test tools


class KeyInput(BaseModel):
    key: str
    wait_for: str | None = None


@dataclass
class Board:
    """Where the test tools record what happened and wait on each other."""

    log: list[str] = field(default_factory=lambda: [])
    done: dict[str, anyio.Event] = field(default_factory=lambda: {})
    running: int = 0
    max_running: int = 0

    def event(self, key: str) -> anyio.Event:
        return self.done.setdefault(key, anyio.Event())


def waiting_tool(board: Board, name: str = "probe", *, read_only: bool = True) -> AnyTool:
    """Records start/end under its `key`; first waits until the call named `wait_for` ended."""

    async def execute(args: KeyInput, ctx: ToolContext) -> ToolOutput:
        board.log.append(f"start {args.key}")
        board.running += 1
        board.max_running = max(board.max_running, board.running)
        try:
            if args.wait_for is not None:
                await board.event(args.wait_for).wait()
            await anyio.lowlevel.checkpoint()
        finally:
            board.running -= 1
        board.log.append(f"end {args.key}")
        board.event(args.key).set()
        return ToolOutput.text(f"done {args.key}")

    def permission(args: KeyInput, ctx: ToolContext) -> PermissionRequest:
        return PermissionRequest(
            rule_tool="Write",
            description=f"touch {args.key}",
            paths=(ctx.cwd / args.key,),
            is_file_edit=True,
        )

    return define_tool(
        name=name,
        description="test tool",
        input_model=KeyInput,
        execute=execute,
        ui=lambda args, ctx: ToolUi(title=f"{name} {args.key}"),
        read_only=read_only,
        permission=None if read_only else permission,
    )


class FailInput(BaseModel):
    how: str

    @field_validator("how")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ("tool_error", "exception", "ok"):
            raise ValueError("how must be tool_error, exception or ok")
        return value


async def _fail(args: FailInput, ctx: ToolContext) -> ToolOutput:
    if args.how == "tool_error":
        raise ToolError("the file is locked")
    if args.how == "exception":
        raise RuntimeError("kaboom")
    return ToolOutput.text("fine")


fail_tool = define_tool(
    name="fail",
    description="fails on demand",
    input_model=FailInput,
    execute=_fail,
    ui=lambda args, ctx: ToolUi(title="fail"),
    read_only=True,
)


class CommandInput(BaseModel):
    command: str


async def _run_command(args: CommandInput, ctx: ToolContext) -> ToolOutput:
    result = await ctx.processes.run(
        args.command, cwd=ctx.cwd, timeout=30, output_limit=10_000, on_output=ctx.progress
    )
    return ToolOutput.text(result.output, is_error=result.exit_code != 0)


shell_tool = define_tool(
    name="shell",
    description="runs a command",
    input_model=CommandInput,
    execute=_run_command,
    ui=lambda args, ctx: ToolUi(title=args.command, kind="execute"),
    read_only=False,
    permission=lambda args, ctx: PermissionRequest(
        rule_tool="Bash", description=args.command, command=args.command
    ),
)


# --------------------------------------------------------------------------- interactions


class Answering:
    """Answers every permission prompt with the first option of `kind` (None: cancels)."""

    def __init__(self, kind: PermissionOptionKind | None = "allow_once") -> None:
        self.kind = kind
        self.prompts: list[PermissionPrompt] = []

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        if self.kind is None:
            return PermissionAnswer(option_id=None)
        option = next(o for o in prompt.options if o.kind == self.kind)
        return PermissionAnswer(option_id=option.id)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


class Hanging:
    """Never answers a permission prompt (the user walked away)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def ask_question(self, question: Question) -> QuestionAnswer:
        return QuestionAnswer(declined=True)


class GatedModel:
    """A scripted model whose calls wait at the end of their stream until `release(n)` (calls
    counted from 1) — to act while a particular call is in flight."""

    def __init__(self, inner: ScriptedModel, gated: Sequence[int]) -> None:
        self.inner = inner
        self.gates = {number: anyio.Event() for number in gated}
        self.reached = {number: anyio.Event() for number in gated}
        self.calls = 0

    @property
    def provider_id(self) -> str:
        return self.inner.provider_id

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def requests(self) -> list[ModelRequest]:
        return self.inner.requests

    def release(self, number: int) -> None:
        self.gates[number].set()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        number = self.calls
        async for event in self.inner.stream(request):
            if event.kind == "finish" and number in self.gates:
                self.reached[number].set()
                await self.gates[number].wait()
            yield event

    async def aclose(self) -> None:
        return None
