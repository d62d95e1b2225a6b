"""`session/request_permission` from the agent's `PermissionPrompt`: what the user approves, in
what every client shows, and the options as clients bind their keys (one per ACP kind)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, cast

from acp_server.tool_calls import diffs, fenced, locations, raw_input_object, text_content
from agent.backends import PermissionOption, PermissionPrompt

if TYPE_CHECKING:
    from acp_server.framing import Message
    from acp_server.protocol.client import PermissionOption as WireOption
    from acp_server.protocol.client import PermissionOptionKind as WireKind
    from acp_server.protocol.common import JsonValue, ToolCallContent, ToolCallUpdate
    from acp_server.updates import UpdateTranslator


def permission_request(translator: UpdateTranslator, prompt: PermissionPrompt) -> Message:
    """The params of `session/request_permission` for `prompt` (`sessionId` is added by the
    channel). The prompt reaches the server one way only, the session's `Interaction`, and only
    once every event before it was sent (`agent.turn.stream.OrderedInteraction`): the call it
    names was announced already, and what the translator knows of it is current. A call that
    already ran keeps showing its terminal or output (a command the sandbox stopped, asking
    whether to run it outside).

    What the user approves is in what every client shows: the title (a command's starts with
    the command itself) and the content: the diff first (CodeCompanion opens its diff view only
    when the first block is one), then the exact command as a code block, or else the call's
    arguments (bounded, secrets masked: `agent.tools.results.shown_arguments`)."""
    known = translator.calls.get(prompt.call_id)
    ui = prompt.ui
    content = diffs(ui)
    if known is not None and known.parent_call_id is not None:
        parent = translator.calls.get(known.parent_call_id)
        task = f" of “{parent.ui.title}”" if parent is not None else ""
        content.append(text_content(f"Asked by the subagent{task}."))  # after any diff
    if known is not None and known.terminal_id is not None:
        content.append({"type": "terminal", "terminalId": known.terminal_id})
    elif known is not None and known.output:
        content.append(text_content(known.output))
    if prompt.command is not None:
        content.append(text_content(fenced(prompt.command, "sh")))
    elif not ui.diffs:
        content.extend(_arguments_content(prompt.raw_input))
    if any(option.unsandboxed for option in prompt.options):
        content.append(text_content(_outside_warning(prompt.reason)))
    offered = _offered(prompt.options)
    dropped = [o for o in prompt.options if o.rule and all(o is not kept for kept in offered)]
    for option in dropped:
        if option.kind == "allow_always":
            content.append(text_content(_project_hint(option.rule or "")))
    tool_call: ToolCallUpdate = {
        "toolCallId": prompt.call_id,
        "title": ui.title,
        "kind": ui.kind,
        "status": "pending",
        "locations": locations(ui),
        "content": content,
    }
    shown_input = raw_input_object(cast("JsonValue", prompt.raw_input))
    if shown_input is not None:
        tool_call["rawInput"] = shown_input
    return {"toolCall": tool_call, "options": [_permission_option(o) for o in offered]}


_WIRE_ORDER: tuple[WireKind, ...] = ("allow_once", "reject_once", "allow_always", "reject_always")
"""The order options are sent in. CodeCompanion's Enter picks the SECOND choice
(`vim.fn.confirm(..., 2)`), so that one is a plain rejection; Toad's Enter picks the first."""


def _wire_kind(option: PermissionOption) -> WireKind:
    match option.kind:
        case "allow_once" | "reject_once" | "reject_always":
            return option.kind
        case "allow_session" | "allow_always":
            return "allow_always"


def _safety(option: PermissionOption) -> int:
    """Lower is safer: among options of one wire kind the safest is the one offered."""
    return int(option.unsandboxed) + (1 if option.kind == "allow_always" else 0)


def _offered(options: tuple[PermissionOption, ...]) -> list[PermissionOption]:
    """At most one option per ACP kind: clients bind their keys by kind (CodeCompanion maps
    each kind to the LAST option of that kind, Toad to the first; Zed's AllowAlways key takes
    the option whose id is `allow_always`, its hint marks the first of the kind). So of
    "allow for this session" and "always allow in this project" only the session grant, the
    safer, is offered; the project rule is named in the content instead, as the
    `/permissions allow` command that adds it. No option id is Zed's `allow_always` or
    `allow_thread`, so Zed's key and hint both fall on the one `allow_always` option."""
    by_kind: dict[WireKind, PermissionOption] = {}
    for option in options:
        kind = _wire_kind(option)
        held = by_kind.get(kind)
        if held is None or _safety(option) < _safety(held):
            by_kind[kind] = option
    return [by_kind[kind] for kind in _WIRE_ORDER if kind in by_kind]


def _permission_option(option: PermissionOption) -> WireOption:
    """One offered option; `_meta.earshot.scope` says what an "always" answer covers."""
    rule = option.rule
    name = option.label or option.id
    meta: dict[str, str | None] | None = None
    match option.kind:
        case "allow_once":
            if option.unsandboxed:
                meta = {"sandbox": "outside"}
        case "allow_session":
            meta = {"scope": "session", "rule": rule}
            if rule:
                name = f"Allow `{rule}` for this session"
        case "allow_always":
            meta = {"scope": "project", "rule": rule}
            if rule:
                name = f"Always allow `{rule}` in this project"
        case "reject_once":
            pass
        case "reject_always":
            meta = {"scope": "project", "rule": rule}
            if rule:
                name = f"Always reject `{rule}` in this project"
    wire: WireOption = {"optionId": _wire_id(option), "name": name, "kind": _wire_kind(option)}
    if meta is not None:
        wire["_meta"] = {"earshot": {key: value for key, value in meta.items() if value}}
    return wire


ZED_SPECIAL_IDS = frozenset({"allow_always", "allow_thread"})
"""Option ids Zed reads specially (`permission_option_for_action`,
`render_permission_buttons_flat`)."""


def _wire_id(option: PermissionOption) -> str:
    # The agent's ids are its own names; one that Zed reads specially is never sent as is.
    return f"earshot-{option.id}" if option.id in ZED_SPECIAL_IDS else option.id


def answered_option(options: tuple[PermissionOption, ...], wire_id: str) -> PermissionOption | None:
    """The offered option a client's answer names (None: not one that was offered)."""
    return next((o for o in _offered(options) if _wire_id(o) == wire_id), None)


def _arguments_content(raw_input: object) -> list[ToolCallContent]:
    from agent.tools import shown_arguments

    if not isinstance(raw_input, dict) or not raw_input:
        return []
    arguments = cast("dict[str, object]", raw_input)
    shown = json.dumps(shown_arguments(arguments), indent=2, ensure_ascii=False)
    return [text_content(f"With these arguments:\n\n{fenced(shown, 'json')}")]


def _outside_warning(reason: str) -> str:
    said = reason[:1].upper() + reason[1:] if reason else "The sandbox stopped this command"
    return (
        f"{said}. Running it outside the sandbox gives it everything your user account can "
        "reach: every file, the network, your other projects."
    )


def _project_hint(rule: str) -> str:
    return f"To allow this in this project from now on, send `/permissions allow {rule}`."
