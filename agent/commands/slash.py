"""Slash commands: a prompt that is exactly `/name [argument]` names a built-in command or a skill.

Both front ends offer them the same way: ACP lists them (`available_commands_update`) and runs a
prompt whose only block is such a text; print mode runs a `-p` prompt that is one. A skill
command becomes a prompt asking the model to use that skill. A built-in command is a session
operation (`AgentSession.run_command`): it changes the session (and its transcript) and says what
it did as `CommandOutput`. Anything else starting with `/` is an ordinary prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from agent.backends import MODES, Interaction, Mode
from agent.commands.branches import fork_command, rewind_command
from agent.events import AgentEvent, CommandOutput
from agent.history import Branches
from providers.types import ReasoningEffort

if TYPE_CHECKING:
    from agent.permissions import PermissionAdmin

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
    return None


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


class CommandTarget(Protocol):
    """What the built-in commands (other than `/compact`) change: an `AgentSession`."""

    @property
    def permissions(self) -> PermissionAdmin: ...

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


async def run_builtin(
    session: CommandTarget,
    call: CommandCall,
    emit: Callable[[AgentEvent], None],
    interaction: Interaction | None = None,
) -> None:
    """Run the built-in command `call` (not `/compact`: the session runs that one itself).
    `interaction` asks the user what a command needs to know (`/rewind`: the files too?)."""

    def say(text: str) -> None:
        emit(CommandOutput(text=text))

    match call.name:
        case "undo":
            say(await session.undo())
        case "mode":
            if not call.argument:
                say(_choices("Mode", session.mode, MODES))
                return
            mode = parse_mode(call.argument)
            if mode is None:
                say(f"Unknown mode `{call.argument}`: use one of {', '.join(MODES)}.")
                return
            await session.set_mode(mode)
            say(f"Mode: {mode}.")
        case "model":
            name = call.argument
            if not name:
                say(_choices("Model", session.model_name, session.model_choices()))
                return
            try:
                await session.set_model(name, session.reasoning_effort)
            except Exception as exc:
                say(f"Could not switch to {name}: {exc}")
                return
            say(f"Model: {name}.")
        case "clear":
            await session.clear()
            say("Cleared: the next prompt starts a fresh conversation.")
        case "permissions":
            report = session.permissions.run(call.argument)
            emit(CommandOutput(text=report.text, data={"permissions": report.data}))
        case "rewind":
            await rewind_command(session.branches, call.argument, emit, interaction)
        case "fork":
            await fork_command(session.branches, call.argument, emit)
        case _:
            say(f"Unknown command /{call.name}.")
