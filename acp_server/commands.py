"""Slash commands: what `available_commands_update` offers and how a prompt names one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp_server.factory import SkillCommand

if TYPE_CHECKING:
    from acp_server.protocol.prompt import AvailableCommand, SessionUpdateAvailableCommandsUpdate

BUILTIN_COMMANDS: tuple[tuple[str, str, str | None], ...] = (
    ("compact", "Summarise the conversation so far to free context", "optional instructions"),
    ("undo", "Restore the files changed by the last batch of tool calls", None),
    ("mode", "Switch mode: plan, ask, accept-edits, auto, yolo", "mode"),
    ("model", "Switch model (provider/model)", "provider/model"),
    ("clear", "Start over: later turns no longer see the conversation so far", None),
)
BUILTIN_NAMES = frozenset(name for name, _, _ in BUILTIN_COMMANDS)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandCall:
    name: str
    argument: str
    skill: bool


def available_commands(skills: Sequence[SkillCommand]) -> SessionUpdateAvailableCommandsUpdate:
    commands: list[AvailableCommand] = []
    for name, description, hint in BUILTIN_COMMANDS:
        command: AvailableCommand = {"name": name, "description": description}
        if hint is not None:
            command["input"] = {"hint": hint}
        commands.append(command)
    for skill in skills:
        if skill.name in BUILTIN_NAMES:
            continue
        commands.append(
            {
                "name": skill.name,
                "description": skill.description or f"Use the {skill.name} skill",
                "input": {"hint": "what the skill should do"},
            }
        )
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def parse_command(text: str | None, skills: Sequence[SkillCommand]) -> CommandCall | None:
    """`/name rest` when `name` is a built-in command or a skill; else None (plain prompt)."""
    if text is None:
        return None
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, argument = stripped[1:].partition(" ")
    name = name.strip()
    if name in BUILTIN_NAMES:
        return CommandCall(name=name, argument=argument.strip(), skill=False)
    if any(skill.name == name for skill in skills):
        return CommandCall(name=name, argument=argument.strip(), skill=True)
    return None


def skill_prompt(call: CommandCall) -> str:
    request = call.argument or "(no further instructions)"
    return (
        f"Use the `{call.name}` skill (load it with the skill tool first) for this request:"
        f"\n\n{request}"
    )
