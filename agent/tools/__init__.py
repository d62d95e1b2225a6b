"""The tools the model calls: one module each, `builtin` lists them, `base` says what a tool is.

See AGENTS.md."""

from typing import TYPE_CHECKING

from agent import lazy_face

if TYPE_CHECKING:
    from agent.tools.base import (
        AnyTool,
        PermissionRequest,
        ReadDenied,
        ReadTracker,
        ScopeContract,
        ToolContext,
        ToolError,
        ToolOutput,
        ToolServices,
        define_tool,
    )
    from agent.tools.builtin import TASK_TOOL_NAME, builtin_tool_names, builtin_tools, task_tool
    from agent.tools.results import argument_summary, shown_arguments

__all__ = [
    "TASK_TOOL_NAME",
    "AnyTool",
    "PermissionRequest",
    "ReadDenied",
    "ReadTracker",
    "ScopeContract",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolServices",
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
                "ReadDenied",
                "ReadTracker",
                "ScopeContract",
                "ToolContext",
                "ToolError",
                "ToolOutput",
                "ToolServices",
                "define_tool",
            ),
            "builtin": ("TASK_TOOL_NAME", "builtin_tool_names", "builtin_tools", "task_tool"),
            "results": ("argument_summary", "shown_arguments"),
        },
    )
