"""The shell command parser the permission rules read: a command line split into the simple commands
it runs, with what each runs or writes besides its own words. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.shell.parse import ParsedCommand, Segment, parse_command, tokens
    from agent.shell.programs import SHELLS
    from agent.shell.quote import code_tokens, tokens_decoded, unquote
    from agent.shell.words import Words, program_name

__all__ = [
    "SHELLS",
    "ParsedCommand",
    "Segment",
    "Words",
    "code_tokens",
    "parse_command",
    "program_name",
    "tokens",
    "tokens_decoded",
    "unquote",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "parse": ("ParsedCommand", "Segment", "parse_command", "tokens"),
            "programs": ("SHELLS",),
            "quote": ("code_tokens", "tokens_decoded", "unquote"),
            "words": ("Words", "program_name"),
        },
    )
