"""The built-in tools, as a session offers them."""

from __future__ import annotations

from agent.skills import SkillIndex
from agent.tools.base import AnyTool
from agent.tools.bash import bash_tool
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


def builtin_tools(*, skills: SkillIndex | None = None) -> list[AnyTool]:
    """read, write, edit, bash, grep, glob, ls, fetch, todo, question, declare_scope, and skill
    when `skills` has any (the loop adds `task` itself)."""
    tools: list[AnyTool] = [
        read_tool,
        write_tool,
        edit_tool,
        bash_tool,
        grep_tool,
        glob_tool,
        ls_tool,
        fetch_tool,
        todo_tool,
        question_tool,
        scope_tool,
    ]
    if skills:
        tools.append(skill_tool(skills))
    return tools


__all__ = ["builtin_tools"]
