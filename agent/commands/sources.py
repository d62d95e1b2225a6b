"""Slash commands beyond the built-in ones: the user's Markdown commands (`agent.commands.user`),
and whatever the composition root adds (MCP prompts as `/mcp__server__prompt`, `/mcp`).

A source is asked for its commands whenever a front end lists or parses them, so a command file
added or edited between two turns is there at the next one (ACP sends `available_commands_update`
again when the list changed). A command answers with text (`/mcp`), or with a prompt that runs as
an ordinary turn (a user command, an MCP prompt), optionally on another model and with fewer
tools allowed. `allowed_tools` can only NARROW: during that turn a call no rule of the list
matches is refused, and a call one matches still goes through the permission gate as any call
does (the list never allows anything by itself). A file in a repository therefore cannot widen
what its command may do.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import anyio

from agent.events import AgentEvent, CommandOutput
from agent.turn import Produce, Prompt

if TYPE_CHECKING:
    from agent.permissions import PermissionAdmin, Rule, RuleBook
    from providers.types import ReasoningEffort


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandReply:
    """What an extra command does: says `text`, or runs a turn with `prompt`."""

    text: str = ""
    data: Mapping[str, object] | None = None
    prompt: Prompt | None = None
    model: str | None = None
    """`provider/model` for that turn only (the session's model comes back after it)."""
    allowed_tools: Sequence[str] | None = None
    """Permission rules (`Bash(git *)`, `Read`...): during the turn, a call none of them
    matches is refused. None: no narrowing."""


class ExtraCommand(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def hint(self) -> str | None:
        """The input hint; None: the command takes no argument."""
        ...

    async def run(self, argument: str) -> CommandReply: ...


class CommandSession(Protocol):
    """What running an extra command uses of an `AgentSession`."""

    @property
    def model_name(self) -> str: ...
    @property
    def reasoning_effort(self) -> ReasoningEffort | None: ...
    @property
    def permissions(self) -> PermissionAdmin: ...
    @property
    def commands(self) -> ExtraCommands: ...

    async def set_model(
        self, model_name: str, reasoning_effort: ReasoningEffort | None = None
    ) -> None: ...
    def run_turn(self, prompt: Prompt) -> AsyncGenerator[AgentEvent, None]: ...
    def run_step(self, produce: Produce) -> AsyncGenerator[AgentEvent, None]:
        """`produce` run like a turn: under a turn's cancel scope, its events streamed."""
        ...


CommandSource = Callable[[], Sequence[ExtraCommand]]
"""Lists its commands as they are now (files read again, servers asked what they hold)."""


@dataclass(slots=True)
class ExtraCommands:
    """The session's extra command sources; the first command of a name wins."""

    sources: Sequence[CommandSource] = field(default_factory=lambda: ())

    def all(self, taken: Sequence[str] = ()) -> list[ExtraCommand]:
        """Every command, each name once, none of the names in `taken` (built-ins, skills)."""
        seen = set(taken)
        found: list[ExtraCommand] = []
        for source in self.sources:
            try:
                commands = source()
            except Exception:  # a broken source costs its commands, never the session
                continue
            for command in commands:
                if command.name not in seen:
                    seen.add(command.name)
                    found.append(command)
        return found

    def find(self, name: str) -> ExtraCommand | None:
        return next((command for command in self.all() if command.name == name), None)


async def run_extra(
    session: CommandSession, command: ExtraCommand, argument: str
) -> AsyncGenerator[AgentEvent, None]:
    """Run an extra command on `session`: its text, or its prompt as a turn (see the module
    docstring for `model` and `allowed_tools`). Preparing it (an MCP server asked for its prompt,
    a restart) runs like a turn, under a turn's cancel scope (`CommandSession.run_step`)."""
    replies: list[CommandReply] = []

    async def prepare(emit: Callable[[AgentEvent], None], scope: anyio.CancelScope) -> None:
        try:
            with scope:
                replies.append(await command.run(argument))
        except Exception as error:
            emit(CommandOutput(text=f"/{command.name} failed: {error}"))
            return
        if scope.cancelled_caught:
            emit(CommandOutput(text=f"/{command.name} was cancelled."))

    prepared = session.run_step(prepare)
    async with contextlib.aclosing(prepared):
        async for event in prepared:
            yield event
    if not replies:
        return
    reply = replies[0]
    if reply.prompt is None:
        yield CommandOutput(text=reply.text, data=reply.data)
        return
    narrowed: tuple[Rule, ...] | None = None
    if reply.allowed_tools is not None:
        try:
            narrowed = _rules(reply.allowed_tools)
        except ValueError as error:
            yield CommandOutput(text=f"/{command.name}: allowed tools: {error}")
            return
    previous = session.model_name, session.reasoning_effort
    if reply.model is not None and reply.model != session.model_name:
        try:
            await session.set_model(reply.model, session.reasoning_effort)
        except Exception as error:
            yield CommandOutput(text=f"/{command.name} wants model {reply.model}: {error}")
            return
    try:
        with _only(session.permissions.book, narrowed):
            events = session.run_turn(reply.prompt)
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event
    finally:
        if session.model_name != previous[0]:
            with contextlib.suppress(Exception):
                await session.set_model(*previous)


def _rules(texts: Sequence[str]) -> tuple[Rule, ...]:
    from agent.permissions import parse_rule

    return tuple(parse_rule(text, "command") for text in texts)


@contextlib.contextmanager
def _only(book: RuleBook | None, rules: tuple[Rule, ...] | None) -> Generator[None]:
    if book is None or rules is None:
        yield
        return
    book.only = rules
    try:
        yield
    finally:
        book.only = None


__all__ = ["CommandReply", "CommandSource", "ExtraCommand", "ExtraCommands", "run_extra"]
