"""A tool call as the model sent it, checked before anything runs: known tool, JSON arguments that
fit the tool's input, and how a front end shows it.

Arguments are validated once: a built-in tool's by its pydantic input model (its JSON schema,
sent to the model, is generated from that model), a tool that brings its own JSON schema (MCP)
by that schema. A call that fails is a `RejectedCall`, whose error the model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agent.backends import ToolUi
from agent.events import AgentEvent, ToolCallProgress
from agent.tools import AnyTool, PermissionRequest, ToolContext
from providers.logs import get_logger
from providers.records import MutableRecord, Record
from providers.types import JsonValue, TextPart, ToolCallPart, ToolResultPart

if TYPE_CHECKING:
    from pydantic import BaseModel

_log = get_logger(__name__)

Emit = Callable[[AgentEvent], None]

INTERRUPTED_TEXT = "interrupted: the user stopped the turn before this call finished"
_ERRORS_SHOWN = 5


class CallSinks(MutableRecord, kw_only=False):
    """One call's live output: progress text and the editor terminal it runs in."""

    call_id: str
    emit: Emit
    terminal_id: str | None = None

    async def progress(self, text: str) -> None:
        self.emit(ToolCallProgress(call_id=self.call_id, text=text))

    async def terminal(self, terminal_id: str) -> None:
        self.terminal_id = terminal_id
        self.emit(ToolCallProgress(call_id=self.call_id, terminal_id=terminal_id))


class ValidCall(Record):
    """A call whose arguments validated: ready for the gate."""

    call: ToolCallPart
    tool: AnyTool
    args: BaseModel
    ui: ToolUi
    ctx: ToolContext
    sinks: CallSinks


class RejectedCall(Record):
    """A call that cannot run; `error` is the text the model gets back."""

    call: ToolCallPart
    error: str
    ui: ToolUi


CheckedCall = ValidCall | RejectedCall


def error_result(call: ToolCallPart, text: str) -> ToolResultPart:
    return ToolResultPart(
        tool_call_id=call.id, name=call.name, content=[TextPart(text=text)], is_error=True
    )


def interrupted_result(call: ToolCallPart, text: str = INTERRUPTED_TEXT) -> ToolResultPart:
    return error_result(call, text)


def title_for(name: str) -> ToolUi:
    """The UI of a call whose arguments are not known (yet)."""
    return ToolUi(title=name)


class SchemaValidators:
    """JSON-schema validators for the tools that bring their own schema, built once per tool
    (building one costs more than using it)."""

    def __init__(self) -> None:
        self._by_name: dict[str, Any] = {}

    def errors(self, tool: AnyTool, arguments: JsonValue) -> list[str]:
        validator = self._by_name.get(tool.name)
        if validator is None:
            # Only sessions with such tools (MCP) pay for jsonschema.
            from jsonschema.validators import validator_for

            schema = tool.input_schema
            validator = validator_for(schema)(schema)
            self._by_name[tool.name] = validator
        found = sorted(validator.iter_errors(arguments), key=lambda error: list(error.path))
        return [_schema_error_text(error) for error in found[:_ERRORS_SHOWN]]


def _schema_error_text(error: Any) -> str:
    where = "/".join(str(item) for item in error.path)
    return f"at `{where}`: {error.message}" if where else str(error.message)


def validate_call(
    call: ToolCallPart,
    tools: Mapping[str, AnyTool],
    validators: SchemaValidators,
    context: Callable[[CallSinks], ToolContext],
    emit: Emit,
) -> CheckedCall:
    """Check `call` against its tool (known name, JSON arguments, the tool's input) and compute
    its UI from the validated arguments."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return RejectedCall(
            call=call,
            error=f"Unknown tool `{call.name}`. The available tools are: {known}.",
            ui=title_for(call.name),
        )
    if call.invalid_arguments is not None:
        raw = call.invalid_arguments
        shown = raw if len(raw) <= 500 else raw[:500] + "..."
        return RejectedCall(
            call=call,
            error=f"The arguments for `{call.name}` were not valid JSON: {shown!r}. "
            "Send them as one JSON object.",
            ui=title_for(call.name),
        )
    args = _arguments(tool, call.arguments, validators)
    if isinstance(args, list):
        return RejectedCall(
            call=call,
            error=f"Invalid arguments for `{call.name}`: " + "; ".join(args),
            ui=title_for(call.name),
        )
    sinks = CallSinks(call_id=call.id, emit=emit)
    ctx = context(sinks)
    try:
        ui = tool.ui(args, ctx)
    except Exception:
        _log.warning("tool ui failed", tool=call.name, exc_info=True)
        ui = title_for(call.name)
    return ValidCall(call=call, tool=tool, args=args, ui=ui, ctx=ctx, sinks=sinks)


def _arguments(
    tool: AnyTool, arguments: JsonValue, validators: SchemaValidators
) -> BaseModel | list[str]:
    """The tool's input built from `arguments`, or what is wrong with them."""
    if tool.extra_schema is not None:
        problems = validators.errors(tool, arguments)
        if problems:
            return problems
        # The schema is the whole contract: the input model only carries the arguments.
        fields: dict[str, Any] = dict(arguments) if isinstance(arguments, dict) else {}
        return tool.input_model.model_construct(**fields)
    # Here: pydantic loads with the tools (their input models), not on the way to a session.
    from pydantic import ValidationError

    try:
        # Strict: JSON types as the schema sent to the model states them ("5" is no integer).
        return tool.input_model.model_validate(arguments, strict=True)
    except ValidationError as exc:
        return [_model_error_text(error) for error in exc.errors()[:_ERRORS_SHOWN]]


def _model_error_text(error: Any) -> str:
    """A pydantic error in the words a JSON-schema validator would use for the schema the model
    was sent (a missing property is named at the object that lacks it)."""
    location = [str(item) for item in error["loc"]]
    message = str(error["msg"])
    if error["type"] == "missing" and location:
        message = f"'{location.pop()}' is a required property"
    where = "/".join(location)
    return f"at `{where}`: {message}" if where else message


def permission_request(checked: ValidCall) -> PermissionRequest:
    """The call described in the gate's terms. Read-only tools may not describe themselves; they
    get a request named after the tool, so deny rules still reach them.

    Raises:
        Exception: whatever the tool's `permission` function raised.
    """
    tool = checked.tool
    if tool.permission is not None:
        return tool.permission(checked.args, checked.ctx)
    return PermissionRequest(rule_tool=rule_name(tool.name), description=checked.ui.title)


def rule_name(tool_name: str) -> str:
    """`read` -> `Read`, `declare_scope` -> `DeclareScope`; MCP names (`mcp__x__y`) unchanged."""
    if tool_name.startswith("mcp__"):
        return tool_name
    return "".join(word[:1].upper() + word[1:] for word in tool_name.split("_"))
