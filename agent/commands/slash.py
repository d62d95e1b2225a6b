"""Slash commands: a prompt that is exactly `/name [argument]` names a built-in command or a skill.

Both front ends offer them the same way: ACP lists them (`available_commands_update`) and runs a
prompt whose only block is such a text; print mode runs a `-p` prompt that is one. A skill
command becomes a prompt asking the model to use that skill. A built-in command is a session
operation (`AgentSession.run_command`): it changes the session (and its transcript) and says what
it did as `CommandOutput`. A prompt that starts with `/word` naming no command (`/bogus`) is
answered with the list of commands, as every client's users expect, rather than sent to the
model; a path (`/usr/bin/x fails`) or a prompt that starts with a space is an ordinary prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from agent.backends import MODES, Interaction, Mode
from agent.commands.branches import fork_command, rewind_command
from agent.events import AgentEvent, CommandOutput
from agent.history import Branches
from providers.types import ReasoningEffort

if TYPE_CHECKING:
    from agent.commands.sources import ExtraCommands
    from agent.permissions.admin import PermissionAdmin
    from agent.skills import Skill

BUILTIN_COMMANDS: Final[tuple[tuple[str, str, str | None], ...]] = (
    ("compact", "Summarise the conversation so far to free context", "optional instructions"),
    ("undo", "Restore the files changed by the last batch of tool calls", None),
    ("mode", "Switch mode: plan, ask, accept-edits, auto, yolo", "mode"),
    ("model", "Switch model (provider/model)", "provider/model"),
    ("clear", "Start over: later turns no longer see the conversation so far", None),
    (
        "permissions",
        "List the permission rules in force; revoke one, or allow, deny or ask for one",
        "revoke RULE | allow RULE | deny RULE | ask RULE",
    ),
    (
        "rewind",
        "Go back to before a user message (lists them without N); can restore files too",
        "message number (empty: list them)",
    ),
    (
        "fork",
        "Copy the conversation (up to before message N) into a new session",
        "message number (empty: the whole conversation)",
    ),
    ("title", "Name this session (the session list shows it)", "title (empty: show it)"),
)
"""(name, description, input hint) of each built-in command."""
BUILTIN_NAMES: Final = frozenset(name for name, _, _ in BUILTIN_COMMANDS)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandCall:
    name: str
    argument: str = ""
    skill: bool = False
    extra: bool = False
    """One of the session's extra commands (`agent.commands.sources`)."""
    unknown: bool = False
    """`/name` names no command: the answer lists the commands (`unknown_command_text`)."""


_COMMAND_NAME = re.compile(r"[A-Za-z][\w:.-]*")
"""What a mistyped command looks like: a word, not a path (`/usr/bin/x`) or `/* ... */`."""


def parse_slash_command(
    text: str | None, skill_names: Collection[str], extra_names: Collection[str] = ()
) -> CommandCall | None:
    """`/name rest` when `name` is a built-in command, a skill or an extra command
    (`agent.commands.sources`); else None (a plain prompt)."""
    if text is None:
        return None
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    name = name.strip()
    if name in BUILTIN_NAMES:
        return CommandCall(name=name, argument=argument.strip())
    if name in skill_names:
        return CommandCall(name=name, argument=argument.strip(), skill=True)
    if name in extra_names:
        return CommandCall(name=name, argument=argument.strip(), extra=True)
    if text.startswith("/") and _COMMAND_NAME.fullmatch(name):
        return CommandCall(name=name, argument=argument.strip(), unknown=True)
    return None


def unknown_command_text(name: str, commands: Sequence[tuple[str, str]]) -> str:
    """The answer to `/name` when no command has that name: the commands, as Markdown list
    items ((name, description) pairs), and how to send such a text to the model after all."""
    lines = [f"Unknown command `/{name}`. The commands are:", ""]
    lines.extend(f"- `/{command}`: {description}" for command, description in commands)
    lines.extend(
        ["", "To send a message that starts with `/` to the model, begin it with a space."]
    )
    return "\n".join(lines)


def skill_prompt(call: CommandCall) -> str:
    """The prompt a skill command sends."""
    request = call.argument or "(no further instructions)"
    return (
        f"Use the `{call.name}` skill (load it with the skill tool first) for this request:"
        f"\n\n{request}"
    )


def parse_mode(value: object) -> Mode | None:
    for mode in MODES:
        if mode == value:
            return mode
    return None


class Labels(Protocol):
    """What `/title` changes (`agent.session.labels.SessionLabels`)."""

    @property
    def title(self) -> str | None: ...

    async def set_title(self, title: str) -> str:
        """Raises: ValueError for an empty title."""
        ...


class CommandTarget(Protocol):
    """What the built-in commands (other than `/compact`) change: an `AgentSession`."""

    @property
    def permissions(self) -> PermissionAdmin: ...
    @property
    def labels(self) -> Labels: ...

    @property
    def model_name(self) -> str: ...
    @property
    def reasoning_effort(self) -> ReasoningEffort | None: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def model_choices(self) -> Callable[[], Sequence[str]]: ...
    @property
    def branches(self) -> Branches: ...

    async def set_mode(self, mode: Mode) -> None: ...
    async def set_model(
        self, model_name: str, reasoning_effort: ReasoningEffort | None
    ) -> None: ...
    async def undo(self) -> str: ...
    async def clear(self) -> None: ...


def _choices(what: str, current: str, choices: Sequence[str]) -> str:
    """`/mode` or `/model` with no argument: the current value and the others, as the pickers
    offer them."""
    lines = [f"{what}: {current}. Choices (`/{what.lower()} NAME` switches):"]
    for choice in dict.fromkeys((current, *choices)):
        lines.append(f"- {choice}" + (" (current)" if choice == current else ""))
    return "\n".join(lines)


def command_menu(
    skills: Sequence[Skill] = (), extras: ExtraCommands | None = None
) -> list[tuple[str, str]]:
    """(name, description) of every command, as `available_commands_update` lists them: the
    built-ins, then the skills, then the extra commands."""
    menu = [(name, description) for name, description, _ in BUILTIN_COMMANDS]
    menu.extend((s.name, s.description) for s in skills if s.name not in BUILTIN_NAMES)
    taken = [name for name, _ in menu]
    menu.extend((c.name, c.description) for c in (extras.all(taken) if extras else ()))
    return menu


async def run_builtin(
    session: CommandTarget,
    call: CommandCall,
    emit: Callable[[AgentEvent], None],
    interaction: Interaction | None = None,
    menu: Sequence[tuple[str, str]] = (),
) -> bool:
    """Run the built-in command `call` (not `/compact`: the session runs that one itself), or
    answer an unknown one with `menu`, the commands there are. `interaction` asks the user what
    a command needs to know (`/rewind`: the files too?). True when the conversation moved to
    another branch (a rewind, not `/rewind` listing the messages)."""

    def say(text: str) -> None:
        emit(CommandOutput(text=text))

    match call.name:
        case "undo":
            say(await session.undo())
        case "mode":
            if not call.argument:
                say(_choices("Mode", session.mode, MODES))
                return False
            mode = parse_mode(call.argument)
            if mode is None:
                say(f"Unknown mode `{call.argument}`: use one of {', '.join(MODES)}.")
                return False
            await session.set_mode(mode)
            say(f"Mode: {mode}.")
        case "model":
            name = call.argument
            if not name:
                say(_choices("Model", session.model_name, session.model_choices()))
                return False
            try:
                await session.set_model(name, session.reasoning_effort)
            except Exception as exc:
                say(f"Could not switch to {name}: {exc}")
                return False
            say(f"Model: {name}.")
        case "clear":
            await session.clear()
            say("Cleared: the next prompt starts a fresh conversation.")
        case "permissions":
            report = session.permissions.run(call.argument)
            emit(CommandOutput(text=report.text, data={"permissions": report.data}))
        case "rewind":
            return await rewind_command(session.branches, call.argument, emit, interaction)
        case "fork":
            await fork_command(session.branches, call.argument, emit)
        case "title":
            await _title(session.labels, call.argument, say)
        case _:
            say(unknown_command_text(call.name, menu or command_menu()))
    return False


async def _title(labels: Labels, argument: str, say: Callable[[str], None]) -> None:
    if not argument:
        current = labels.title
        say(f"Title: {current}." if current else "This session has no title yet.")
        return
    try:
        title = await labels.set_title(argument)
    except ValueError as exc:
        say(f"No title set: {exc}.")
        return
    say(f"Title: {title}.")
