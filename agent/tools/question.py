"""`question`: ask the user something the model cannot decide alone."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agent.backends import Question, ToolUi
from agent.tools.base import ToolContext, ToolError, ToolOutput, define_tool
from agent.tools.results import capped, short


class QuestionInput(BaseModel):
    model_config = ConfigDict(defer_build=True)

    question: str = Field(description="The question, complete and self-contained.")
    choices: list[str] = Field(
        default_factory=lambda: [],
        description="Answers to choose from (2-6 short options). Leave empty for a free-text "
        "answer.",
    )
    multiple: bool = Field(default=False, description="Whether the user may pick several choices.")


DESCRIPTION = """Ask the user a question and wait for the answer: a choice among options, or \
free text.

Use it when a decision is genuinely theirs (which approach, which of several files, missing \
requirements), not for things you can find out yourself. The user may decline to answer."""


def _ui(params: QuestionInput, ctx: ToolContext) -> ToolUi:
    return ToolUi(title=short(params.question, 100), kind="other")


async def _execute(params: QuestionInput, ctx: ToolContext) -> ToolOutput:
    text = params.question.strip()
    if not text:
        raise ToolError("The question is empty.")
    choices = tuple(choice.strip() for choice in params.choices if choice.strip())
    answer = await ctx.interaction.ask_question(
        Question(call_id=ctx.call_id, question=text, choices=choices, multiple=params.multiple)
    )
    if answer.declined or not answer.answers:
        return ToolOutput.text(
            "The user declined to answer. Continue with your best judgement, and say which "
            "assumption you made."
        )
    if len(answer.answers) == 1:
        return ToolOutput.text(f"The user answered: {answer.answers[0]}")
    listed = "\n".join(f"- {item}" for item in answer.answers)
    return ToolOutput.text(f"The user answered:\n{listed}")


question_tool = define_tool(
    name="question",
    description=DESCRIPTION,
    input_model=QuestionInput,
    execute=capped(_execute),
    ui=_ui,
    read_only=True,
)
