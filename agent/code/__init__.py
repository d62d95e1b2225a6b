"""What earshot knows of the user's code beyond its files: the session's code index (opened lazily,
refreshed in the background), edits that check themselves (language-server diagnostics, the verify
loop), and the worker loop they run on. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.code.edit_checks import EditChecks
    from agent.code.index_host import CodeIndexHost
    from agent.code.session_worker import SessionWorker

__all__ = [
    "CodeIndexHost",
    "EditChecks",
    "SessionWorker",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "edit_checks": ("EditChecks",),
            "index_host": ("CodeIndexHost",),
            "session_worker": ("SessionWorker",),
        },
    )
