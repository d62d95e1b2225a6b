"""The turn's event stream: a question to the user comes after every event before it was handled
(the prompt's one channel), and cancelling goes through the turn's cancel scope."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from agent.backends import (
    PermissionAnswer,
    PermissionOption,
    PermissionPrompt,
    Question,
    QuestionAnswer,
    ToolUi,
)
from agent.events import AgentEvent, Notice, TurnEnded
from agent.turn import Announcer, OrderedInteraction, TurnStream

PROMPT = PermissionPrompt(
    call_id="c1",
    tool_name="bash",
    ui=ToolUi(title="run"),
    raw_input=None,
    reason="ask",
    options=(PermissionOption(id="allow_once", label="Allow", kind="allow_once"),),
)


class Recording:
    def __init__(self) -> None:
        self.prompts: list[PermissionPrompt] = []
        self.questions: list[Question] = []

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        self.prompts.append(prompt)
        return PermissionAnswer(option_id="allow_once")

    async def ask_question(self, question: Question) -> QuestionAnswer:
        self.questions.append(question)
        return QuestionAnswer(answers=("yes",))


def notice(text: str) -> Notice:
    return Notice(severity="info", message=text)


async def test_a_prompt_waits_until_the_consumer_has_handled_every_earlier_event() -> None:
    stream = TurnStream()
    user = Recording()
    ordered = OrderedInteraction(user, stream)

    async def produce(emit: object, scope: anyio.CancelScope) -> None:
        stream.emit(notice("tool call shown"))
        await ordered.request_permission(PROMPT)
        await ordered.ask_question(Question(call_id="c2", question="sure?"))
        stream.emit(notice("after"))

    with anyio.fail_after(10):
        async with aclosing(stream.events(produce)) as events:
            first = await anext(events)
            assert first == notice("tool call shown")
            # The producer has run as far as it can while this event is being handled.
            await anyio.wait_all_tasks_blocked()
            assert user.prompts == [] and user.questions == []
            # Asking for the next event says the first one was handled: the prompts go out.
            assert await anext(events) == notice("after")
            assert user.prompts == [PROMPT] and len(user.questions) == 1
            assert [event async for event in events] == []
    assert stream.done.is_set()


async def test_nothing_waits_once_the_consumer_has_gone() -> None:
    stream = TurnStream()
    user = Recording()
    ordered = OrderedInteraction(user, stream)
    asked = anyio.Event()

    async def produce(emit: object, scope: anyio.CancelScope) -> None:
        stream.emit(notice("one"))
        with anyio.CancelScope(shield=True):  # settling after the consumer closed the stream
            await ordered.request_permission(PROMPT)
        asked.set()

    with anyio.fail_after(10):
        events = stream.events(produce)
        assert await anext(events) == notice("one")
        await events.aclose()  # cancels the turn; the producer still settles
        await asked.wait()
    assert user.prompts == [PROMPT]


async def test_cancel_goes_through_the_turn_scope_and_the_producer_settles() -> None:
    stream = TurnStream()
    announce = Announcer()
    announce.stream = stream
    started = anyio.Event()

    async def produce(emit: object, scope: anyio.CancelScope) -> None:
        assert scope is stream.scope
        try:
            with scope:
                started.set()
                await anyio.sleep_forever()
        finally:
            announce(TurnEnded(reason="cancelled"))

    seen: list[AgentEvent] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:

            async def cancel_once_started() -> None:
                await started.wait()
                stream.cancel()

            tasks.start_soon(cancel_once_started)
            async for event in stream.events(produce):
                seen.append(event)
    assert seen == [TurnEnded(reason="cancelled")]
    announce.stream = None
    announce(notice("between turns: nowhere"))  # no stream, no error


@pytest.mark.parametrize("stop_early", [False, True])
async def test_on_done_runs_once_the_stream_is_over(stop_early: bool) -> None:
    stream = TurnStream()
    done: list[bool] = []

    async def produce(emit: object, scope: anyio.CancelScope) -> None:
        stream.emit(notice("a"))
        stream.emit(notice("b"))

    with anyio.fail_after(10):
        async with aclosing(stream.events(produce, on_done=lambda: done.append(True))) as events:
            async for _ in events:
                if stop_early:
                    break
    assert done == [True] and stream.done.is_set()


async def test_a_notice_said_after_the_producer_ended_waits_for_the_next_turn() -> None:
    """Between the end of a turn's (or command's) work and the end of its stream, a notice is not
    lost: the stream no longer takes events, so the announcer says so and the notice is kept for
    the next turn (an MCP server failing just as a `/mcp` command ended lost its warning)."""
    from agent.session.tool_arrivals import ToolArrivals

    stream = TurnStream()
    announcer = Announcer()
    announcer.stream = stream
    arrivals = ToolArrivals()
    arrivals.attach(announcer.deliver)

    async def produce(emit: object, scope: anyio.CancelScope) -> None:
        stream.emit(notice("the command's output"))

    seen: list[AgentEvent] = []
    async with aclosing(stream.events(produce)) as events:
        async for event in events:
            seen.append(event)
            await anyio.wait_all_tasks_blocked()  # the producer has returned: its end is next
            arrivals.say(notice("server failed"))
    assert [event.message for event in seen if isinstance(event, Notice)] == [
        "the command's output"
    ]
    assert [item.message for item in arrivals.take_notices()] == ["server failed"]
