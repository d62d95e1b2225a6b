"""Tools that join a session after it opened (`agent.session.tool_arrivals`; issue 30): the first
turn waits for `startup` once, a tool that arrives during a turn joins at the next model request, at
the END of the tool list (the earlier specs kept, unchanged, as its beginning), several arriving
together in rank order, and each notice is said once: in the running turn, or at the start of the
next one."""

from __future__ import annotations

from pathlib import Path

import anyio
from pydantic import BaseModel

from agent.backends import ToolUi
from agent.events import AgentEvent, Notice, TurnEnded
from agent.session import ToolArrivals
from agent.tools import AnyTool, ToolContext, ToolOutput, define_tool
from agent.turn import ToolSet
from providers.types import ModelRequest, TextPart
from providers.wire.scripted import ScriptedCall, ScriptedModel, ScriptedTurn, TurnSpec
from tests.agent.loop_support import collect, env, make_session, of


class NoInput(BaseModel):
    pass


def plain_tool(name: str) -> AnyTool:
    async def execute(args: NoInput, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=[TextPart(text=f"{name} ran")])

    return define_tool(
        name=name,
        description=f"The {name} tool.",
        input_model=NoInput,
        execute=execute,
        ui=lambda args, ctx: ToolUi(title=name),
        read_only=True,
    )


def names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def test_extended_appends_and_keeps_the_specs_built_so_far() -> None:
    base = ToolSet([plain_tool("a"), plain_tool("b")])
    specs = base.specs
    joined = base.extended([plain_tool("c"), plain_tool("a"), plain_tool("d")])
    assert list(joined) == ["a", "b", "c", "d"]  # `a` is taken: the first tool keeps it
    assert joined.specs[:2] == specs and joined.specs[0] is specs[0]
    assert base.extended([plain_tool("b")]) is base
    lazy = ToolSet(names=["a"], load=lambda: [plain_tool("a")]).extended([plain_tool("z")])
    assert list(lazy) == ["a", "z"] and [s.name for s in lazy.specs] == ["a", "z"]


async def test_a_tool_arriving_mid_turn_joins_at_the_next_request_at_the_end(
    tmp_path: Path,
) -> None:
    arrivals = ToolArrivals()
    requests: list[ModelRequest] = []

    def play(request: ModelRequest) -> TurnSpec:
        requests.append(request)
        if len(requests) == 1:
            # While the model streams its first answer: two servers become ready, the one
            # configured second first. Nothing changes for this request.
            arrivals.add([plain_tool("late_b")], rank=2)
            arrivals.add([plain_tool("late_a1"), plain_tool("late_a2")], rank=1)
            arrivals.say(Notice(severity="info", message="late tools", prominent=True))
            return ScriptedTurn(tool_calls=[ScriptedCall(name="first", id="c1")])
        if len(requests) == 2:
            return ScriptedTurn(tool_calls=[ScriptedCall(name="late_a2", id="c2")])
        return ScriptedTurn(text="done")

    where = env(tmp_path)
    session = await make_session(
        where, ScriptedModel(play), tools=[plain_tool("first")], tool_arrivals=arrivals
    )
    events = await collect(session.run_turn("go"))
    assert names(requests[0]) == ["task", "first"]
    assert names(requests[1]) == ["task", "first", "late_a1", "late_a2", "late_b"]
    assert requests[1].tools[:2] == requests[0].tools
    assert [n.message for n in of(Notice, events)] == ["late tools"]
    assert of(TurnEnded, events)[-1].reason == "end_turn"
    assert "late_a2 ran" in str(session.history())
    again = await collect(session.run_turn("again"))
    assert not of(Notice, again)  # said once
    await session.aclose()


async def test_the_first_turn_waits_for_startup_once_and_says_what_came_before(
    tmp_path: Path,
) -> None:
    started = anyio.Event()
    release = anyio.Event()
    waits: list[str] = []

    async def startup() -> None:
        waits.append("waited")
        started.set()
        await release.wait()

    arrivals = ToolArrivals(startup)
    model = ScriptedModel([ScriptedTurn(text="one"), ScriptedTurn(text="two")])
    session = await make_session(env(tmp_path), model, tool_arrivals=arrivals)
    arrivals.say(Notice(severity="warning", message="server x failed"))  # between turns: held
    assert not arrivals.started
    first: list[AgentEvent] = []
    async with anyio.create_task_group() as tasks:

        async def run() -> None:
            first.extend(await collect(session.run_turn("go")))

        tasks.start_soon(run)
        with anyio.fail_after(10):
            await started.wait()
        assert model.requests == []  # the turn is waiting for the startup
        arrivals.add([plain_tool("ready_in_time")])
        release.set()
    assert arrivals.started
    assert [n.message for n in of(Notice, first)] == ["server x failed"]
    assert names(model.requests[0])[-1] == "ready_in_time"
    await collect(session.run_turn("again"))
    assert waits == ["waited"]
    await session.aclose()


async def test_cancel_ends_a_turn_waiting_for_startup(tmp_path: Path) -> None:
    entered = anyio.Event()

    async def startup() -> None:
        entered.set()
        await anyio.sleep_forever()

    model = ScriptedModel([ScriptedTurn(text="after")])
    session = await make_session(env(tmp_path), model, tool_arrivals=ToolArrivals(startup))
    events: list[AgentEvent] = []
    async with anyio.create_task_group() as tasks:

        async def run() -> None:
            events.extend(await collect(session.run_turn("go")))

        tasks.start_soon(run)
        with anyio.fail_after(10):
            await entered.wait()
        session.cancel()
    assert of(TurnEnded, events)[-1].reason == "cancelled"
    assert model.requests == []
    await collect(session.run_turn("next"))  # the next turn does not wait again
    assert len(model.requests) == 1
    await session.aclose()


def test_begin_starts_the_producer_once() -> None:
    begun: list[str] = []
    arrivals = ToolArrivals(begin=lambda: begun.append("begun"))
    arrivals.begin()
    arrivals.begin()
    assert begun == ["begun"]
    ToolArrivals().begin()  # nothing to begin: nothing happens
