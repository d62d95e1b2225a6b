"""The tools the model calls: one module each, `builtin` lists them, `base` says what a tool is.

See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.tools.base import (
        AnyTool,
        PermissionRequest,
        ReadTracker,
        ScopeContract,
        ToolContext,
        ToolError,
        ToolOutput,
        define_tool,
    )
    from agent.tools.builtin import TASK_TOOL_NAME, builtin_tool_names, builtin_tools, task_tool
    from agent.tools.results import argument_summary, shown_arguments
    from agent.tools.services import (
        BACKGROUND,
        CODE_INDEX,
        READ_DENIED,
        READ_DENY_GLOBS,
        RECHECK_PERMISSION,
        SKILLS,
        SUBAGENTS,
        TODOS,
        ReadDenied,
    )

__all__ = [
    "BACKGROUND",
    "CODE_INDEX",
    "READ_DENIED",
    "READ_DENY_GLOBS",
    "RECHECK_PERMISSION",
    "SKILLS",
    "SUBAGENTS",
    "TASK_TOOL_NAME",
    "TODOS",
    "AnyTool",
    "PermissionRequest",
    "ReadDenied",
    "ReadTracker",
    "ScopeContract",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "argument_summary",
    "builtin_tool_names",
    "builtin_tools",
    "define_tool",
    "shown_arguments",
    "task_tool",
]

if not TYPE_CHECKING:  # a checker reads the imports above, so an unknown name is an error
    __getattr__ = lazy_face(
        __name__,
        {
            "base": (
                "AnyTool",
                "PermissionRequest",
                "ReadTracker",
                "ScopeContract",
                "ToolContext",
                "ToolError",
                "ToolOutput",
                "define_tool",
            ),
            "builtin": ("TASK_TOOL_NAME", "builtin_tool_names", "builtin_tools", "task_tool"),
            "results": ("argument_summary", "shown_arguments"),
            "services": (
                "BACKGROUND",
                "CODE_INDEX",
                "READ_DENIED",
                "READ_DENY_GLOBS",
                "RECHECK_PERMISSION",
                "SKILLS",
                "SUBAGENTS",
                "TODOS",
                "ReadDenied",
            ),
        },
    )
