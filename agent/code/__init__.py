"""What earshot knows of the user's code beyond its files: the session's code index (opened lazily,
refreshed in the background), edits that check themselves (language-server diagnostics, the verify
loop). What outlives a turn runs in the session's block (`agent.tasks`). See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.code.edit_checks import EditChecks
    from agent.code.index_host import CodeIndexHost

__all__ = [
    "CodeIndexHost",
    "EditChecks",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "edit_checks": ("EditChecks",),
            "index_host": ("CodeIndexHost",),
        },
    )
