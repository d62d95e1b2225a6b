"""`skill`: load a skill's instructions by name (present only when skills exist)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Location, ToolUi
from agent.skills import SkillIndex
from agent.tools.base import (
    AnyTool,
    PermissionRequest,
    ToolContext,
    ToolError,
    ToolOutput,
    define_tool,
)
from agent.tools.results import capped


class SkillInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    name: str = Field(description="The name of the skill to load, exactly as listed.")


def skill_tool(index: SkillIndex) -> AnyTool:
    """The tool loading skills from `index` (which its description lists)."""
    listing = "\n".join(
        f"- {skill.name}: {skill.description}" if skill.description else f"- {skill.name}"
        for skill in index.skills
    )
    description = (
        "Load a skill: instructions for a specific kind of task, written by the user or the "
        "project. When a task matches a skill's description, load it before starting and "
        f"follow it.\n\nAvailable skills:\n{listing}"
    )

    def permission(params: SkillInput, ctx: ToolContext) -> PermissionRequest:
        skill = index.get(params.name)
        return PermissionRequest(
            rule_tool="Skill",
            description=f"Load skill {params.name}",
            paths=(skill.path,) if skill else (),
            specifier=params.name,
        )

    def ui(params: SkillInput, ctx: ToolContext) -> ToolUi:
        skill = index.get(params.name)
        return ToolUi(
            title=f"Load skill {params.name}",
            kind="read",
            locations=(Location(path=str(skill.path), line=1),) if skill else (),
        )

    async def execute(params: SkillInput, ctx: ToolContext) -> ToolOutput:
        skill = index.get(params.name)
        if skill is None:
            names = ", ".join(s.name for s in index.skills)
            raise ToolError(f"No skill named {params.name!r}. Available: {names}.")
        try:
            body = index.load(skill.name)
        except OSError as error:
            raise ToolError(f"Cannot read {skill.path}: {error}") from error
        return ToolOutput.text(
            f"Skill {skill.name} ({skill.path}). Relative paths in it are relative to "
            f"{skill.directory}.\n\n{body}"
        )

    return define_tool(
        name="skill",
        description=description,
        input_model=SkillInput,
        execute=capped(execute),
        ui=ui,
        read_only=True,
        permission=permission,
    )
