"""The local machine: the file and process backends a session uses when no editor provides its own,
background commands, and the reaper that ends a background command's processes. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.local.backends import LocalFiles, LocalProcesses
    from agent.local.background import (
        READ_LIMIT,
        TRACKS_DETACHED,
        UNTRACKED_NOTE,
        BackgroundJobs,
        JobOutput,
        UnknownJob,
    )

__all__ = [
    "READ_LIMIT",
    "TRACKS_DETACHED",
    "UNTRACKED_NOTE",
    "BackgroundJobs",
    "JobOutput",
    "LocalFiles",
    "LocalProcesses",
    "UnknownJob",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "backends": ("LocalFiles", "LocalProcesses"),
            "background": (
                "READ_LIMIT",
                "TRACKS_DETACHED",
                "UNTRACKED_NOTE",
                "BackgroundJobs",
                "JobOutput",
                "UnknownJob",
            ),
        },
    )
