"""v1 shapes into v2 shapes, where the two protocols say the same thing differently: pure
functions, no state (`acp_server.v2.channel` keeps what a session needs).

The server's translation of the core's events (`acp_server.updates`, `acp_server.tool_calls`,
`acp_server.permission_prompts`, `acp_server.config`, `acp_server.commands`) is one, written in
v1's shapes; a v2 session sends each update through here. What differs:
- a tool call is created and patched by `tool_call_update` alone (v1's `tool_call` is its first);
- a diff is `changes` (each file's path and operation) and a `git_patch`, not old and new text;
- a location's line starts at 1; a config option is named by `configId`, a group by `groupId`;
- a command's input is tagged (`{type: "text", hint}`), and so is the command (`type: command`);
- the todo list is a plan with an id (`plan_update`), a user message is sent whole
  (`user_message`), and every message chunk names its message;
- modes are the `mode` config option only (`current_mode_update` has no v2 counterpart);
- a permission request has a `title` and a `subject` (the tool call, patched as by an update).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp_server.framing import Message
    from acp_server.protocol.common import SessionConfigOption as V1ConfigOption
    from acp_server.protocol.common import ToolCallContent as V1Content
    from acp_server.protocol.common import ToolCallLocation as V1Location
    from acp_server.protocol.prompt import AvailableCommand as V1Command
    from acp_server.protocol.prompt import PlanEntry as V1PlanEntry
    from acp_server.protocol.v2.common import (
        AvailableCommand,
        DiffChange,
        SessionConfigOption,
        SessionConfigSelectGroup,
        SessionConfigSelectOption,
        ToolCallContent,
        ToolCallLocation,
        ToolCallUpdate,
    )
    from acp_server.protocol.v2.prompt import PlanEntry, SessionUpdatePlanUpdate

PLAN_ID = "todos"
"""The one plan a session has: its todo list (`todo_write`), replaced whole at each change."""


def content(items: list[V1Content] | None) -> list[ToolCallContent] | None:
    """A tool call's content; a diff becomes v2's (the other items are the same)."""
    if items is None:
        return None
    converted: list[ToolCallContent] = []
    for item in items:
        if item["type"] == "diff":
            converted.append(diff(item["path"], item.get("oldText"), item["newText"]))
        else:
            converted.append(cast("ToolCallContent", item))
    return converted


def diff(path: str, old_text: str | None, new_text: str) -> ToolCallContent:
    """One file's change: `add` for a new file (no old text), else `modify`, with the change as
    a git patch (what earshot showed as old and new text: for a replayed edit, the changed
    lines only, `agent.history.replay`)."""
    change: DiffChange = (
        {"operation": "add", "path": path, "fileType": "text"}
        if old_text is None
        else {"operation": "modify", "path": path, "fileType": "text"}
    )
    return {
        "type": "diff",
        "changes": [change],
        "patch": {"format": "git_patch", "text": git_patch(path, old_text, new_text)},
    }


def git_patch(path: str, old_text: str | None, new_text: str) -> str:
    """A `git diff`-style patch of one text file (`path` absolute, shown after `a`/`b`)."""
    old_lines = (old_text or "").splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    header = [f"diff --git a{path} b{path}\n"]
    if old_text is None:
        header.append("new file mode 100644\n")
    body = difflib.unified_diff(
        _terminated(old_lines),
        _terminated(new_lines),
        fromfile="/dev/null" if old_text is None else f"a{path}",
        tofile=f"b{path}",
    )
    return "".join(header + list(body))


def _terminated(lines: list[str]) -> list[str]:
    """A last line without its newline marked as git marks it (the hunk stays parseable)."""
    if lines and not lines[-1].endswith("\n"):
        return [*lines[:-1], lines[-1] + "\n\\ No newline at end of file\n"]
    return lines


def locations(items: list[V1Location] | None) -> list[ToolCallLocation] | None:
    """v2 lines start at 1 (`0` is invalid): a line 0 is left out."""
    if items is None:
        return None
    converted: list[ToolCallLocation] = []
    for item in items:
        location: ToolCallLocation = {"path": item["path"]}
        line = item.get("line")
        if line is not None and line >= 1:
            location["line"] = line
        converted.append(location)
    return converted


def tool_call(fields: Message) -> ToolCallUpdate:
    """A v1 `tool_call` or `tool_call_update` (or a permission request's `toolCall`), without its
    `sessionUpdate` tag, as v2's upsert."""
    result = {k: v for k, v in fields.items() if k != "sessionUpdate"}
    if "content" in fields:
        result["content"] = content(cast("list[V1Content] | None", fields["content"]))
    if "locations" in fields:
        result["locations"] = locations(cast("list[V1Location] | None", fields["locations"]))
    return cast("ToolCallUpdate", result)


def plan(entries: list[V1PlanEntry]) -> SessionUpdatePlanUpdate:
    """The todo list as v2's plan (v1's and v2's plan entries are the same shape)."""
    items = cast("list[PlanEntry]", entries)
    return {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": PLAN_ID, "entries": items},
    }


def commands(items: list[V1Command]) -> list[AvailableCommand]:
    converted: list[AvailableCommand] = []
    for item in items:
        command: AvailableCommand = {
            "type": "command",
            "name": item["name"],
            "description": item["description"],
        }
        hint = item.get("input")
        if hint is not None:
            command["input"] = {"type": "text", "hint": hint["hint"]}
        converted.append(command)
    return converted


def config_options(items: list[V1ConfigOption]) -> list[SessionConfigOption]:
    """v1's options (`id`, groups by `group`) as v2's (`configId`, `groupId`); every option
    earshot offers is a select (the mode among them: v2 has no modes of its own)."""
    converted: list[SessionConfigOption] = []
    for item in items:
        if item["type"] != "select":
            continue
        values = item["options"]
        options: list[SessionConfigSelectOption] | list[SessionConfigSelectGroup]
        if values and "group" in values[0]:
            groups = cast("list[dict[str, object]]", values)
            options = [
                {
                    "groupId": str(group["group"]),
                    "name": str(group["name"]),
                    "options": cast("list[SessionConfigSelectOption]", group["options"]),
                }
                for group in groups
            ]
        else:
            options = cast("list[SessionConfigSelectOption]", values)
        option: SessionConfigOption = {
            "type": "select",
            "configId": item["id"],
            "name": item["name"],
            "currentValue": item["currentValue"],
            "options": options,
        }
        for key in ("description", "category"):
            if item.get(key) is not None:
                cast("dict[str, object]", option)[key] = item.get(key)
        converted.append(option)
    return converted


def permission_params(params: Message) -> Message:
    """`session/request_permission` params (`sessionId` kept): v1's `toolCall` becomes the
    prompt's `title` and its `subject`, which the client applies to the call as an update."""
    fields = dict(params)
    call = cast("Message", fields.pop("toolCall", {}))
    title = call.get("title")
    fields["title"] = title if isinstance(title, str) and title else "Allow this?"
    fields["subject"] = {"type": "tool_call", "toolCall": tool_call(call)}
    return fields
