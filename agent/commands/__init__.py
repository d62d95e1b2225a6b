"""Slash commands: the built-in ones, /rewind and /fork, the user's Markdown commands, and the
sources the composition root adds (MCP prompts). See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.commands.slash import (
        BUILTIN_COMMANDS,
        BUILTIN_NAMES,
        CommandCall,
        parse_slash_command,
        run_builtin,
        skill_prompt,
    )
    from agent.commands.sources import (
        CommandReply,
        CommandSource,
        ExtraCommand,
        ExtraCommands,
        run_extra,
    )
    from agent.commands.user import user_commands_source

__all__ = [
    "BUILTIN_COMMANDS",
    "BUILTIN_NAMES",
    "CommandCall",
    "CommandReply",
    "CommandSource",
    "ExtraCommand",
    "ExtraCommands",
    "parse_slash_command",
    "run_builtin",
    "run_extra",
    "skill_prompt",
    "user_commands_source",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "slash": (
                "BUILTIN_COMMANDS",
                "BUILTIN_NAMES",
                "CommandCall",
                "parse_slash_command",
                "run_builtin",
                "skill_prompt",
            ),
            "sources": (
                "CommandReply",
                "CommandSource",
                "ExtraCommand",
                "ExtraCommands",
                "run_extra",
            ),
            "user": ("user_commands_source",),
        },
    )
