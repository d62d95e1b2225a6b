"""The pure parts of what a tool call and a permission prompt send (`acp_server.tool_calls`,
`acp_server.updates`): objects for `rawInput`/`rawOutput`, literal code blocks, and one option
per kind chosen by safety."""

from __future__ import annotations

from typing import Any, cast

from acp_server.permission_prompts import answered_option, permission_request
from acp_server.tool_calls import fenced, raw_input_object, raw_output
from acp_server.updates import UpdateTranslator
from agent.backends import PermissionOption, PermissionPrompt, ToolUi
from agent.events import ToolCallFinished
from providers.types import JsonValue, TextPart, ToolResultPart


def finished(text: str, raw: JsonValue = None) -> ToolCallFinished:
    result = ToolResultPart(tool_call_id="c", name="t", content=[TextPart(text=text)])
    return ToolCallFinished(
        call_id="c", name="t", status="completed", result=result, raw_output=raw
    )


def test_raw_output_and_raw_input_are_always_objects() -> None:
    assert raw_output(finished("text", {"exit_code": 0})) == {"exit_code": 0}
    assert raw_output(finished("the result")) == {"output": "the result"}
    assert raw_output(finished("r", [1, 2])) == {"output": "r", "value": [1, 2]}
    assert raw_output(finished("")) is None
    assert raw_input_object({"a": 1}) == {"a": 1}
    assert raw_input_object("not json") == {"value": "not json"}
    assert raw_input_object(None) is None


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert fenced("ls", "sh") == "```sh\nls\n```"
    assert fenced("echo ````x````") == "`````\necho ````x````\n`````"


def test_of_two_options_of_one_kind_the_safer_is_offered_and_answers_map_back() -> None:
    options = (
        PermissionOption(id="out", label="Outside", kind="allow_once", unsandboxed=True),
        PermissionOption(id="allow_once", label="Allow once", kind="allow_once"),
        PermissionOption(id="allow_always", label="Always", kind="allow_always", rule="Bash(ls *)"),
        PermissionOption(
            id="allow_session", label="Session", kind="allow_session", rule="Bash(ls *)"
        ),
        PermissionOption(id="reject_once", label="Reject", kind="reject_once"),
    )
    prompt = PermissionPrompt(
        call_id="c",
        tool_name="bash",
        ui=ToolUi(title="ls", kind="execute"),
        raw_input={"command": "ls"},
        reason="ask mode",
        options=options,
        command="ls",
    )
    params = cast("dict[str, Any]", permission_request(UpdateTranslator(), prompt))
    offered = [(o["optionId"], o["kind"]) for o in params["options"]]
    assert offered == [
        ("allow_once", "allow_once"),
        ("reject_once", "reject_once"),
        ("allow_session", "allow_always"),
    ]
    texts = [c["content"]["text"] for c in params["toolCall"]["content"]]
    assert texts[0] == "```sh\nls\n```"
    assert (
        texts[-1]
        == "To allow this in this project from now on, send `/permissions allow Bash(ls *)`."
    )
    assert answered_option(options, "allow_session") is options[3]
    assert answered_option(options, "allow_always") is None  # not offered: never accepted
    assert answered_option(options, "out") is None
