"""The command sandbox: every command the model runs is confined by the operating system (bubblewrap
on Linux, Seatbelt on macOS), with its own network namespace and proxy on Linux. See AGENTS.md and
command_sandbox.py."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.sandbox.command_sandbox import Sandbox, SandboxStatus, open_sandbox
    from agent.sandbox.engine import SandboxRefused

__all__ = [
    "Sandbox",
    "SandboxRefused",
    "SandboxStatus",
    "open_sandbox",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "command_sandbox": ("Sandbox", "SandboxStatus", "open_sandbox"),
            "engine": ("SandboxRefused",),
        },
    )
