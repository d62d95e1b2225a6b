"""The agent session: what ACP and print mode drive. create_session sets one up from the composition
root's options and the settings; run_turn streams a turn's events; subagents are child sessions;
tools may join after it opened. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.session.agent_session import AgentSession, UnsupportedPrompt
    from agent.session.creation import create_session
    from agent.session.setup import ModelUnavailable, SessionOptions, discover_skills
    from agent.session.tool_arrivals import ToolArrivals

__all__ = [
    "AgentSession",
    "ModelUnavailable",
    "SessionOptions",
    "ToolArrivals",
    "UnsupportedPrompt",
    "create_session",
    "discover_skills",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "agent_session": ("AgentSession", "UnsupportedPrompt"),
            "creation": ("create_session",),
            "setup": ("ModelUnavailable", "SessionOptions", "discover_skills"),
            "tool_arrivals": ("ToolArrivals",),
        },
    )
