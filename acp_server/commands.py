"""Slash commands as ACP offers them (`available_commands_update`); what they are and how they
run is the agent's (`agent.slash_commands`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_server.factory import SkillCommand
from agent.slash_commands import BUILTIN_COMMANDS, BUILTIN_NAMES

if TYPE_CHECKING:
    from acp_server.protocol.prompt import AvailableCommand, SessionUpdateAvailableCommandsUpdate


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
