"""The built-in tools, as a session offers them.

Their names are known without loading them: a session is answered (ACP `session/new`) before any
tool module is imported, and the first turn (or the front end's warm-up) loads them. The tool
modules define pydantic input models and pull in the shell parser, the sandbox and the HTTP
client, which together cost more than the rest of a session's start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from agent.skills import SkillIndex
    from agent.tools.base import AnyTool

BUILTIN_TOOL_NAMES: Final = (
    "read",
    "write",
    "edit",
    "bash",
    "bash_output",
    "bash_kill",
    "grep",
    "glob",
    "ls",
    "fetch",
    "todo",
    "question",
    "declare_scope",
    "repo_map",
    "search_code",
)
SKILL_TOOL_NAME: Final = "skill"
TASK_TOOL_NAME: Final = "task"


def builtin_tool_names(*, skills: SkillIndex | None = None) -> tuple[str, ...]:
    """The names `builtin_tools` will have, without loading them."""
    return (*BUILTIN_TOOL_NAMES, SKILL_TOOL_NAME) if skills else BUILTIN_TOOL_NAMES


def builtin_tools(*, skills: SkillIndex | None = None) -> list[AnyTool]:
    """read, write, edit, bash (with bash_output and bash_kill), grep, glob, ls, fetch, todo,
    question, declare_scope, repo_map, search_code, and skill when `skills` has any (the session
    adds `task` itself)."""
    # Imported here: see the module docstring (start-up cost).
    from agent.tools.background_tools import bash_kill_tool, bash_output_tool
    from agent.tools.bash import bash_tool
    from agent.tools.code_index import repo_map_tool, search_code_tool
    from agent.tools.edit import edit_tool
    from agent.tools.fetch import fetch_tool
    from agent.tools.glob_tool import glob_tool
    from agent.tools.grep import grep_tool
    from agent.tools.ls import ls_tool
    from agent.tools.question import question_tool
    from agent.tools.read import read_tool
    from agent.tools.scope import scope_tool
    from agent.tools.skill import skill_tool
    from agent.tools.todo import todo_tool
    from agent.tools.write import write_tool

    tools: list[AnyTool] = [
        read_tool,
        write_tool,
        edit_tool,
        bash_tool,
        bash_output_tool,
        bash_kill_tool,
        grep_tool,
        glob_tool,
        ls_tool,
        fetch_tool,
        todo_tool,
        question_tool,
        scope_tool,
        repo_map_tool,
        search_code_tool,
    ]
    if skills:
        tools.append(skill_tool(skills))
    return tools


def task_tool() -> AnyTool:
    """The `task` tool (subagents; `agent.session.subagent` runs them)."""
    from agent.tools.task import task_tool as tool  # start-up cost, as above

    return tool


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "TASK_TOOL_NAME",
    "builtin_tool_names",
    "builtin_tools",
    "task_tool",
]
