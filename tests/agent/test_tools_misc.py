from __future__ import annotations

from pathlib import Path

import pytest

from agent.backends import QuestionAnswer
from agent.events import TodoItem
from agent.skills import SkillIndex
from agent.tools import ToolContext, ToolError, ToolOutput, ToolServices, builtin_tools
from agent.tools.question import question_tool
from agent.tools.results import MAX_RESULT_CHARS, cap_text, capped
from agent.tools.scope import scope_tool
from agent.tools.skill import skill_tool
from agent.tools.todo import todo_tool
from providers.types import TextPart
from tests.agent.tools_harness import Harness, harness, text_of


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return harness(tmp_path)


# ------------------------------------------------------------------------------------- todo


async def test_todo_publishes_the_complete_plan(h: Harness) -> None:
    output = await h.run(
        todo_tool,
        todos=[
            {"content": "Write tests", "status": "completed", "priority": "high"},
            {"content": "Fix bug", "status": "in_progress"},
            {"content": "Update docs"},
        ],
    )
    assert h.plans == [
        (
            TodoItem(content="Write tests", status="completed", priority="high"),
            TodoItem(content="Fix bug", status="in_progress", priority="medium"),
            TodoItem(content="Update docs", status="pending", priority="medium"),
        )
    ]
    assert text_of(output).splitlines() == [
        "Plan updated: 1 completed, 1 in progress, 1 pending.",
        "[x] Write tests",
        "[>] Fix bug",
        "[ ] Update docs",
    ]
    assert todo_tool.read_only and h.ui(todo_tool, todos=[]).kind == "think"


async def test_todo_without_a_plan_sink_still_answers(h: Harness) -> None:
    h.ctx.services = ToolServices()
    assert text_of(await h.run(todo_tool, todos=[])) == "Plan cleared."


# --------------------------------------------------------------------------------- question


async def test_question_returns_the_answer(h: Harness) -> None:
    h.user.answers.append(QuestionAnswer(answers=("Postgres",)))
    output = await h.run(
        question_tool, question="Which database?", choices=["Postgres", " SQLite ", ""]
    )
    assert text_of(output) == "The user answered: Postgres"
    asked = h.user.asked[0]
    assert asked.call_id == "call-1"
    assert asked.question == "Which database?"
    assert asked.choices == ("Postgres", "SQLite")
    assert not asked.multiple


async def test_question_multiple_and_declined(h: Harness) -> None:
    h.user.answers.append(QuestionAnswer(answers=("a", "b")))
    text = text_of(await h.run(question_tool, question="Pick", choices=["a", "b"], multiple=True))
    assert text == "The user answered:\n- a\n- b"
    declined = await h.run(question_tool, question="Free text?")
    assert not declined.is_error
    assert text_of(declined).startswith("The user declined to answer.")
    assert h.user.asked[1].choices == ()
    with pytest.raises(ToolError, match="empty"):
        await h.run(question_tool, question="  ")


# ---------------------------------------------------------------------------- declare_scope


async def test_declare_scope_fills_the_shared_contract(h: Harness, tmp_path: Path) -> None:
    contract = h.ctx.scope
    await h.run(scope_tool, paths=["src", "README.md", "src"], reason="the fix")
    root = tmp_path.resolve()
    assert contract.declared == [root / "src", root / "README.md"]
    assert contract.covers(root / "src" / "a.py")
    assert not contract.covers(root / "setup.py")


async def test_declared_scope_can_narrow_but_not_widen(h: Harness, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    await h.run(scope_tool, paths=["src"])
    with pytest.raises(ToolError, match="can only be narrowed"):
        await h.run(scope_tool, paths=["src", "tests"])
    assert h.ctx.scope.declared == [root / "src"]
    await h.run(scope_tool, paths=["src/core"])
    assert h.ctx.scope.declared == [root / "src" / "core"]


# ------------------------------------------------------------------------------------ skill


def skills_in(tmp_path: Path) -> SkillIndex:
    folder = tmp_path / ".earshot" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy to staging\n---\nRun ./deploy.sh staging\n",
        encoding="utf-8",
    )
    return SkillIndex.discover(tmp_path, config_home=tmp_path / "no-config", project=True)


async def test_skill_tool_lists_and_loads_skills(h: Harness, tmp_path: Path) -> None:
    index = skills_in(tmp_path)
    tool = skill_tool(index)
    assert "- deploy: Deploy to staging" in tool.description
    text = text_of(await h.run(tool, name="deploy"))
    assert text.endswith("\n\nRun ./deploy.sh staging")
    assert str(tmp_path / ".earshot" / "skills" / "deploy") in text
    with pytest.raises(ToolError, match="Available: deploy"):
        await h.run(tool, name="nope")
    request = h.permission(tool, name="deploy")
    assert (request.rule_tool, request.specifier) == ("Skill", "deploy")
    assert tool.read_only


def test_builtin_tools(tmp_path: Path) -> None:
    names = [tool.name for tool in builtin_tools()]
    assert names == [
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
    ]
    with_skills = builtin_tools(skills=skills_in(tmp_path))
    assert [tool.name for tool in with_skills][-1] == "skill"
    assert builtin_tools(skills=SkillIndex()) == builtin_tools()
    for tool in with_skills:
        schema = tool.input_schema
        assert schema["type"] == "object"
        properties = schema["properties"]
        assert isinstance(properties, dict)
        for name, field in properties.items():
            assert isinstance(field, dict) and field.get("description"), (tool.name, name)
        if tool.name in ("read", "grep", "glob", "ls", "fetch", "skill"):
            assert tool.permission is not None, tool.name


# ------------------------------------------------------------------------------- result cap


async def test_every_result_is_capped(h: Harness) -> None:
    assert cap_text("short") == "short"
    capped_text = cap_text("z" * (MAX_RESULT_CHARS + 10))
    assert capped_text.startswith("z" * MAX_RESULT_CHARS + "\n\n[Result truncated: 10 more")

    async def huge(params: object, ctx: ToolContext) -> ToolOutput:
        return ToolOutput.text("q" * 100_000, is_error=True)

    output = await capped(huge)(object(), h.ctx)
    assert output.is_error
    part = output.content[0]
    assert isinstance(part, TextPart)
    assert len(part.text) < MAX_RESULT_CHARS + 200


# --------------------------------------------------------------------------- define_tool


def test_a_mutating_tool_without_a_permission_request_cannot_be_defined() -> None:
    from pydantic import BaseModel

    from agent.backends import ToolUi
    from agent.tools import PermissionRequest, define_tool

    class Nothing(BaseModel):
        pass

    async def execute(params: Nothing, ctx: ToolContext) -> ToolOutput:
        return ToolOutput.text("changed something")

    def ui(params: Nothing, ctx: ToolContext) -> ToolUi:
        return ToolUi(title="sneaky")

    # The gate only sees a tool's PermissionRequest: a mutating tool without one would run
    # ungated, so it must not even be constructible.
    with pytest.raises(ValueError, match="sneaky"):
        define_tool(name="sneaky", description="d", input_model=Nothing, execute=execute, ui=ui)
    with pytest.raises(ValueError, match="sneaky"):
        define_tool(
            name="sneaky", description="d", input_model=Nothing, execute=execute, ui=ui,
            read_only=False,
        )  # fmt: skip
    # The same tool declared read-only, or describing itself, is fine.
    assert define_tool(
        name="reader", description="d", input_model=Nothing, execute=execute, ui=ui, read_only=True
    ).read_only
    described = define_tool(
        name="writer",
        description="d",
        input_model=Nothing,
        execute=execute,
        ui=ui,
        permission=lambda params, ctx: PermissionRequest(rule_tool="Write", description="w"),
    )
    assert described.permission is not None and not described.read_only
