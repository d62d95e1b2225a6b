"""What the model is sent, derived from the history without rewriting it: capped and pruned tool
results, compaction, token estimates, the prompt cache's economics, usage, and the built-in system
prompt. See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.context.caching import CACHE_SETTINGS, DEFAULT_CACHE, CacheSetting, prompt_cache
    from agent.context.shaper import CompactionResult, ContextShaper, ShapeContext
    from agent.context.system_prompt import ClientPrompt, build_system_prompt, session_date
    from agent.context.tokens import text_tokens
    from agent.context.usage import SessionUsage, UsageTracker, usage_summary

__all__ = [
    "CACHE_SETTINGS",
    "DEFAULT_CACHE",
    "CacheSetting",
    "ClientPrompt",
    "CompactionResult",
    "ContextShaper",
    "SessionUsage",
    "ShapeContext",
    "UsageTracker",
    "build_system_prompt",
    "prompt_cache",
    "session_date",
    "text_tokens",
    "usage_summary",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "caching": ("CACHE_SETTINGS", "DEFAULT_CACHE", "CacheSetting", "prompt_cache"),
            "shaper": ("CompactionResult", "ContextShaper", "ShapeContext"),
            "system_prompt": ("ClientPrompt", "build_system_prompt", "session_date"),
            "tokens": ("text_tokens",),
            "usage": ("SessionUsage", "UsageTracker", "usage_summary"),
        },
    )
