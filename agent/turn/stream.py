"""One turn's events, as `AgentSession.run_turn` streams them.

The turn's work runs in a producer task under the turn's cancel scope, the one place a turn is
cancelled from (`cancel`); the consumer iterates the events. Closing the iterator early (inside
`contextlib.aclosing`) cancels the turn and lets it settle. The stream also knows how far the
consumer has got: `drained` waits until it has handled every event emitted so far, which is how
a question to the user comes after everything the user was shown before it
(`OrderedInteraction`).
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Awaitable, Callable

import anyio

from agent.backends import (
    Interaction,
    PermissionAnswer,
    PermissionPrompt,
    Question,
    QuestionAnswer,
)
from agent.events import AgentEvent

Emit = Callable[[AgentEvent], None]
Produce = Callable[[Emit, anyio.CancelScope], Awaitable[None]]
"""The turn's work: emits its events, runs under the turn's cancel scope (given)."""


class TurnStream:
    """The events of one turn (or one slash command), produced under one cancel scope."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        """The turn's cancel scope: cancelling it stops the turn (it then settles)."""
        self.done = anyio.Event()
        """Set once the producer has finished and the stream is closed."""
        self._send, self._receive = anyio.create_memory_object_stream[AgentEvent](math.inf)
        self._emitted = 0
        self._handled = 0
        self._closed = False
        self._waiters: list[tuple[int, anyio.Event]] = []

    def emit(self, event: AgentEvent) -> None:
        if self._closed:
            return  # the consumer went away; the turn is settling
        self._send.send_nowait(event)
        self._emitted += 1

    def cancel(self) -> None:
        self.scope.cancel()

    async def drained(self) -> None:
        """Wait until the consumer has handled every event emitted so far (it asked for the
        next one); at once when nobody consumes any more."""
        target = self._emitted
        if self._closed or self._handled >= target:
            return
        ready = anyio.Event()
        self._waiters.append((target, ready))
        await ready.wait()

    async def events(
        self, produce: Produce, *, on_done: Callable[[], None] | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run `produce` and yield what it emits until it returns; `on_done` runs last."""
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._produce, produce)
                try:
                    while True:
                        # Drain without a checkpoint per event: the producer's own awaits
                        # already give way, and a checkpoint per text delta dominates the cost.
                        try:
                            event = self._receive.receive_nowait()
                        except anyio.WouldBlock:
                            try:
                                event = await self._receive.receive()
                            except anyio.EndOfStream:
                                break
                        except anyio.EndOfStream:
                            break
                        yield event
                        self._handled += 1
                        self._wake()
                except GeneratorExit:
                    # The consumer closed us: stop the turn, let it settle, end quietly.
                    self._close()
                    self.scope.cancel()
        finally:
            self._close()
            self._receive.close()
            if on_done is not None:
                on_done()
            self.done.set()

    @property
    def accepting(self) -> bool:
        """Whether an event emitted now reaches the consumer (False once the producer has ended:
        its stream is closing)."""
        return not self._closed

    async def _produce(self, produce: Produce) -> None:
        with self._send:
            try:
                await produce(self.emit, self.scope)
            finally:
                # What is emitted from now on is late (the send side closes): dropped here, and
                # refused by `Announcer.deliver`, which then keeps it for the next turn.
                self._closed = True

    def _wake(self) -> None:
        if not self._waiters:
            return
        still: list[tuple[int, anyio.Event]] = []
        for target, ready in self._waiters:
            if self._handled >= target:
                ready.set()
            else:
                still.append((target, ready))
        self._waiters = still

    def _close(self) -> None:
        self._closed = True
        for _, ready in self._waiters:
            ready.set()
        self._waiters = []


class Announcer:
    """Where the session's own events go (a mode switch, a new title, the todo list): into the
    running turn's stream, or nowhere between turns (a front end learns those from the call it
    made)."""

    __slots__ = ("stream",)

    def __init__(self) -> None:
        self.stream: TurnStream | None = None

    def __call__(self, event: AgentEvent) -> None:
        self.deliver(event)

    def deliver(self, event: AgentEvent) -> bool:
        """Into the running turn; False (dropped) between turns, and once the turn's work has
        ended (its stream is closing: the caller keeps what must not be lost)."""
        if self.stream is None or not self.stream.accepting:
            return False
        self.stream.emit(event)
        return True


class OrderedInteraction:
    """An `Interaction` that asks only once the front end has handled every event of the turn
    so far: a permission prompt names a tool call the front end has already been shown (ACP
    requires the call to exist), and the prompt travels one channel, this one."""

    def __init__(self, inner: Interaction, stream: TurnStream) -> None:
        self._inner = inner
        self._stream = stream

    async def request_permission(self, prompt: PermissionPrompt) -> PermissionAnswer:
        await self._stream.drained()
        return await self._inner.request_permission(prompt)

    async def ask_question(self, question: Question) -> QuestionAnswer:
        await self._stream.drained()
        return await self._inner.ask_question(question)
