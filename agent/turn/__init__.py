"""One turn: the loop (shape context, stream the model, gate and run its tool calls, record the
results, repeat), the calls checked and executed, hooks, the prompts on their way in, and what the
transcript keeps of each call. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.turn.audit_trail import AuditTrail
    from agent.turn.config import ToolSet, TurnConfig
    from agent.turn.hooks import HookRunner
    from agent.turn.inbox import Prompt, PromptInbox, UnsupportedPrompt, prompt_message, title_from
    from agent.turn.loop import TurnLoop
    from agent.turn.retry import RetryPolicy
    from agent.turn.stream import Announcer, OrderedInteraction, Produce, TurnStream
    from agent.turn.tool_calls import INTERRUPTED_TEXT, CallSinks, interrupted_result, title_for
    from agent.turn.tooling import Snapshot, Tooling

__all__ = [
    "INTERRUPTED_TEXT",
    "Announcer",
    "AuditTrail",
    "CallSinks",
    "HookRunner",
    "OrderedInteraction",
    "Produce",
    "Prompt",
    "PromptInbox",
    "RetryPolicy",
    "Snapshot",
    "ToolSet",
    "Tooling",
    "TurnConfig",
    "TurnLoop",
    "TurnStream",
    "UnsupportedPrompt",
    "interrupted_result",
    "prompt_message",
    "title_for",
    "title_from",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "audit_trail": ("AuditTrail",),
            "config": ("ToolSet", "TurnConfig"),
            "hooks": ("HookRunner",),
            "inbox": ("Prompt", "PromptInbox", "UnsupportedPrompt", "prompt_message", "title_from"),
            "loop": ("TurnLoop",),
            "retry": ("RetryPolicy",),
            "stream": ("Announcer", "OrderedInteraction", "Produce", "TurnStream"),
            "tool_calls": ("INTERRUPTED_TEXT", "CallSinks", "interrupted_result", "title_for"),
            "tooling": ("Snapshot", "Tooling"),
        },
    )
