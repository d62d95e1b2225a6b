"""The `task` tool: a subagent with a fresh context, restricted tools, the parent's gate and scope,
and its events forwarded under the task call's id."""

from __future__ import annotations

from pathlib import Path

import anyio

from agent.events import (
    AgentEvent,
    PermissionDecided,
    TextChunk,
    ToolCallFinished,
    TurnEnded,
    UsageUpdated,
)
from agent.tools import ScopeContract, ToolContext
from providers.types import ModelRequest, Usage
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn, TurnSpec
from tests.agent.loop_support import (
    Answering,
    Board,
    assert_every_call_answered,
    collect,
    env,
    make_session,
    of,
    results_of,
    waiting_tool,
)


def _is_subagent(request: ModelRequest) -> bool:
    return "You are a subagent" in request.system


class TwoLevelScript:
    """Plays `parent` turns to the session and `child` turns to its subagents."""

    def __init__(self, parent: list[TurnSpec], child: list[TurnSpec]) -> None:
        self.parent = parent
        self.child = child
        self.child_requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> TurnSpec:
        if _is_subagent(request):
            self.child_requests.append(request)
            return self.child.pop(0)
        return self.parent.pop(0)


async def test_a_subagent_works_in_a_fresh_context_and_its_answer_is_the_result(
    tmp_path: Path,
) -> None:
    where = env(tmp_path)
    (where.cwd / "config.py").write_text("DEBUG = True\n", encoding="utf-8")
    task = ScriptedCall(
        name="task",
        id="task_1",
        arguments={"description": "Find the flag", "prompt": "Where is DEBUG set?"},
    )
    script = TwoLevelScript(
        parent=[
            ScriptedTurn(text="Delegating.", tool_calls=[task]),
            ScriptedTurn(text="DEBUG lives in config.py."),
        ],
        child=[
            ScriptedTurn(
                text="Searching",
                tool_calls=[ScriptedCall(name="grep", arguments={"pattern": "DEBUG"})],
                usage=Usage(input_tokens=10, output_tokens=5),
            ),
            ScriptedTurn(text="It is set in config.py line 1."),
        ],
    )
    session = await make_session(where, ScriptedModel(script), builtin=True)
    events = await collect(session.run_turn("find the debug flag"))

    assert events[-1] == TurnEnded(reason="end_turn")
    first_child = script.child_requests[0]
    assert [m.text for m in first_child.messages] == ["Where is DEBUG set?"]
    assert sorted(t.name for t in first_child.tools) == ["fetch", "glob", "grep", "ls", "read"]

    nested = [e for e in events if getattr(e, "parent_call_id", None) == "task_1"]
    assert "Searching" in [e.text for e in nested if isinstance(e, TextChunk)]
    grep_done = [e for e in nested if isinstance(e, ToolCallFinished)]
    assert [(f.name, f.status) for f in grep_done] == [("grep", "completed")]
    assert "config.py" in grep_done[0].result.text

    task_result = results_of(session.history())["task_1"]
    assert task_result.text == "It is set in config.py line 1."
    # Only the parent's conversation is persisted; the subagent's own messages are not.
    assert [m.role for m in session.history()] == ["user", "assistant", "tool", "assistant"]
    assert_every_call_answered(session.history())
    # The subagent's model calls count towards the session's usage.
    assert any(u.total.input_tokens >= 10 for u in of(UsageUpdated, events))
    await session.aclose()


async def test_subagent_mutations_go_through_the_parents_gate(tmp_path: Path) -> None:
    where = env(tmp_path)
    board = Board()
    touch = waiting_tool(board, "touch", read_only=False)
    task = ScriptedCall(
        name="task",
        id="task_1",
        arguments={"description": "Touch", "prompt": "touch w", "tools": ["touch"]},
    )
    script = TwoLevelScript(
        parent=[ScriptedTurn(tool_calls=[task]), ScriptedTurn(text="it could not")],
        child=[
            ScriptedTurn(tool_calls=[ScriptedCall(name="touch", arguments={"key": "w"})]),
            ScriptedTurn(text="permission was refused"),
        ],
    )
    interaction = Answering("reject_once")
    session = await make_session(
        where, ScriptedModel(script), tools=[touch], interaction=interaction
    )
    events = await collect(session.run_turn("go"))

    assert len(interaction.prompts) == 1
    nested = [d for d in of(PermissionDecided, events) if d.parent_call_id == "task_1"]
    assert nested and not nested[0].allowed and nested[0].answer == "reject_once"
    denied = [f for f in of(ToolCallFinished, events) if f.parent_call_id == "task_1"]
    assert denied[0].status == "denied"
    assert board.log == []
    assert results_of(session.history())["task_1"].text == "permission was refused"
    await session.aclose()


async def test_subagents_cannot_nest_or_use_unknown_tools(tmp_path: Path) -> None:
    task = ScriptedCall(
        name="task",
        id="task_1",
        arguments={"description": "x", "prompt": "y", "tools": ["read", "task", "todo"]},
    )
    model = ScriptedModel([ScriptedTurn(tool_calls=[task]), ScriptedTurn(text="ok")])
    session = await make_session(env(tmp_path), model, builtin=True)
    await collect(session.run_turn("go"))
    result = results_of(session.history())["task_1"]
    assert result.is_error
    assert "Subagents cannot use: task, todo" in result.text
    await session.aclose()


async def test_parallel_tasks_share_the_scope_contract_object(tmp_path: Path) -> None:
    from pydantic import BaseModel

    from agent.backends import ToolUi
    from agent.tools import ToolOutput, define_tool

    seen: list[ScopeContract] = []

    class Empty(BaseModel):
        pass

    async def look(args: Empty, ctx: ToolContext) -> ToolOutput:
        seen.append(ctx.scope)
        return ToolOutput.text("looked")

    look_tool = define_tool(
        name="look",
        description="records the scope it sees",
        input_model=Empty,
        execute=look,
        ui=lambda args, ctx: ToolUi(title="look"),
        read_only=True,
    )
    tasks = [
        ScriptedCall(
            name="task",
            id=f"task_{n}",
            arguments={"description": "look", "prompt": "look", "tools": ["look"]},
        )
        for n in (1, 2)
    ]
    script = TwoLevelScript(
        parent=[
            ScriptedTurn(tool_calls=[*tasks, ScriptedCall(name="look", id="own")]),
            ScriptedTurn(text="ok"),
        ],
        child=[
            ScriptedTurn(tool_calls=[ScriptedCall(name="look", id="c1")]),
            ScriptedTurn(tool_calls=[ScriptedCall(name="look", id="c2")]),
            ScriptedTurn(text="one"),
            ScriptedTurn(text="two"),
        ],
    )
    session = await make_session(env(tmp_path), ScriptedModel(script), tools=[look_tool])
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        events = [e async for e in session.run_turn("go")]
    assert events[-1] == TurnEnded(reason="end_turn")
    assert len(seen) == 3
    assert all(scope is seen[0] for scope in seen)
    results = results_of(session.history())
    assert {results["task_1"].text, results["task_2"].text} == {"one", "two"}
    await session.aclose()


async def test_a_failing_subagent_model_call_is_the_tasks_error(tmp_path: Path) -> None:
    from providers.types import ProviderError

    task = ScriptedCall(name="task", id="task_1", arguments={"description": "x", "prompt": "y"})
    error = ProviderError(kind="invalid_request", message="bad tool schema", retryable=False)
    script = TwoLevelScript(
        parent=[ScriptedTurn(tool_calls=[task]), ScriptedTurn(text="the subagent failed")],
        child=[ScriptedTurn(error=error)],
    )
    session = await make_session(env(tmp_path), ScriptedModel(script), builtin=True)
    events = await collect(session.run_turn("go"))
    result = results_of(session.history())["task_1"]
    assert result.is_error and "bad tool schema" in result.text
    assert events[-1] == TurnEnded(reason="end_turn")
    await session.aclose()
