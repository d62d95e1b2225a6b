"""Slash commands as ACP offers them (`available_commands_update`); what they are and how they
run is the agent's (`agent.commands.slash`, `agent.commands.sources`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_server.ports import SkillCommand
from agent.commands import BUILTIN_COMMANDS, BUILTIN_NAMES

if TYPE_CHECKING:
    from acp_server.client_io import SessionChannel
    from acp_server.protocol.prompt import AvailableCommand, SessionUpdateAvailableCommandsUpdate
    from agent.commands import ExtraCommand, ExtraCommands


def available_commands(
    skills: Sequence[SkillCommand], extras: Sequence[ExtraCommand] = ()
) -> SessionUpdateAvailableCommandsUpdate:
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
    for extra in extras:
        command = {"name": extra.name, "description": extra.description}
        if extra.hint is not None:
            command["input"] = {"hint": extra.hint}
        commands.append(command)
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def taken_names(skills: Sequence[SkillCommand]) -> list[str]:
    """Names an extra command cannot have: the built-ins' and the skills'."""
    return [*BUILTIN_NAMES, *(skill.name for skill in skills)]


class CommandList:
    """What the client was last told, so the list is sent again only when it changed (a
    command file added, an MCP server restarted)."""

    def __init__(self) -> None:
        self._sent: SessionUpdateAvailableCommandsUpdate | None = None

    async def send(
        self,
        channel: SessionChannel,
        skills: Sequence[SkillCommand],
        extras: ExtraCommands,
        *,
        force: bool,
    ) -> None:
        update = available_commands(skills, extras.all(taken_names(skills)))
        if force or update != self._sent:
            self._sent = update
            await channel.update(update)
