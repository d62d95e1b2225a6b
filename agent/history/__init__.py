"""A session's stored history: its JSONL transcript, replayed as the events a live run would have
produced, its branches (rewind and fork), and the undo batches it recorded. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.history.branches import (
        Branches,
        ForkPoint,
        UserMessage,
        fork_point,
        fork_session,
        listing,
        parse_number,
        shorten,
        user_messages,
    )
    from agent.history.replay import replay_events
    from agent.history.session_transcript import SessionTranscript
    from agent.history.undo_batches import BatchUndo

__all__ = [
    "BatchUndo",
    "Branches",
    "ForkPoint",
    "SessionTranscript",
    "UserMessage",
    "fork_point",
    "fork_session",
    "listing",
    "parse_number",
    "replay_events",
    "shorten",
    "user_messages",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "branches": (
                "Branches",
                "ForkPoint",
                "UserMessage",
                "fork_point",
                "fork_session",
                "listing",
                "parse_number",
                "shorten",
                "user_messages",
            ),
            "replay": ("replay_events",),
            "session_transcript": ("SessionTranscript",),
            "undo_batches": ("BatchUndo",),
        },
    )
