"""Messages the server sends and receives today, typed with the generated ACP wire types.

pyright (strict, over tests/) checks that each fits its type; `test_protocol_types.py` checks
at run time that each validates against the schema definition its method names. The shapes are
copied from what the server builds (`advertised.py`, `config.py`, `updates.py`, `client_io.py`,
`commands.py`, `server.py`) and from what the tests expect of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, assert_never, cast

from acp_server.protocol.client import (
    CreateTerminalRequest,
    ReadTextFileRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    WriteTextFileRequest,
)
from acp_server.protocol.common import ContentBlock, Error, JsonObject, ToolCallUpdate
from acp_server.protocol.connection import InitializeRequest, InitializeResponse
from acp_server.protocol.elicitation import CreateElicitationRequest, CreateElicitationResponse
from acp_server.protocol.methods import (
    AGENT_REQUESTS,
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    AgentRequestHandlers,
    ClientRequestSender,
)
from acp_server.protocol.prompt import (
    PromptRequest,
    PromptResponse,
    SessionNotification,
    SessionUpdate,
)
from acp_server.protocol.sessions import (
    ListSessionsResponse,
    NewSessionRequest,
    NewSessionResponse,
    SessionModeState,
    SetSessionConfigOptionResponse,
)

# ----------------------------------------------------------------------------- client -> agent

INITIALIZE_PARAMS: InitializeRequest = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "elicitation": {"form": {}},
        "session": {"notices": {}, "compaction": {}},
        "_meta": {"terminal_output": True},
    },
    "clientInfo": {"name": "zed", "version": "0.200.0"},
}

NEW_SESSION_PARAMS: NewSessionRequest = {
    "cwd": "/home/user/project",
    "additionalDirectories": ["/home/user/lib"],
    "mcpServers": [
        {"name": "time", "command": "mcp-server-time", "args": [], "env": []},
        {"type": "http", "name": "docs", "url": "http://127.0.0.1:8931/mcp", "headers": []},
    ],
}

PROMPT_PARAMS: PromptRequest = {
    "sessionId": "sess_1",
    "prompt": [
        {"type": "text", "text": "Explain this file"},
        {"type": "resource_link", "name": "main.py", "uri": "file:///home/user/project/main.py"},
        {
            "type": "resource",
            "resource": {"uri": "file:///home/user/project/a.txt", "text": "hello\n"},
        },
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
    ],
}

# ----------------------------------------------------------------------------- agent -> client

INITIALIZE_RESULT: InitializeResponse = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": True},
        "sessionCapabilities": {
            "list": {},
            "resume": {},
            "close": {},
            "delete": {},
            "additionalDirectories": {},
        },
        "auth": {"logout": {}},
    },
    "authMethods": [
        {
            "id": "env",
            "name": "API key from environment",
            "description": "Set your provider's API key in its environment variable.",
        }
    ],
    "agentInfo": {"name": "earshot", "title": "earshot", "version": "0.1.0"},
}

MODES: SessionModeState = {
    "currentModeId": "ask",
    "availableModes": [
        {
            "id": "plan",
            "name": "Plan",
            "description": "Read and plan only: every change is refused",
        },
        {"id": "ask", "name": "Ask", "description": "Ask before every change and command"},
    ],
}

NEW_SESSION_RESULT: NewSessionResponse = {
    "sessionId": "sess_1",
    "modes": MODES,
    "configOptions": [
        {
            "id": "mode",
            "name": "Mode",
            "description": "How much earshot may do without asking",
            "category": "mode",
            "type": "select",
            "currentValue": "ask",
            "options": [
                {"value": "plan", "name": "Plan", "description": "Read and plan only"},
                {"value": "ask", "name": "Ask", "description": "Ask before every change"},
            ],
        },
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": "anthropic/claude-sonnet-4-5",
            "options": [
                {
                    "group": "anthropic",
                    "name": "Anthropic",
                    "options": [{"value": "anthropic/claude-sonnet-4-5", "name": "Sonnet 4.5"}],
                }
            ],
        },
        {
            "id": "thought_level",
            "name": "Thinking",
            "category": "thought_level",
            "type": "select",
            "currentValue": "default",
            "options": [{"value": "default", "name": "Model default"}],
        },
    ],
}

SET_CONFIG_OPTION_RESULT: SetSessionConfigOptionResponse = {
    "configOptions": NEW_SESSION_RESULT.get("configOptions") or []
}

LIST_SESSIONS_RESULT: ListSessionsResponse = {
    "sessions": [
        {
            "sessionId": "sess_1",
            "cwd": "/home/user/project",
            "updatedAt": "2026-12-02T10:00:00Z",
            "title": "Explain main.py",
        }
    ],
    "nextCursor": "sess_0",
}

PROMPT_RESULT: PromptResponse = {"stopReason": "end_turn"}
CANCELLED_PROMPT_RESULT: PromptResponse = {"stopReason": "cancelled"}

TOOL_CALL_FIELDS: ToolCallUpdate = {
    "toolCallId": "call_1",
    "title": "Edit main.py",
    "kind": "edit",
    "status": "pending",
    "locations": [{"path": "/home/user/project/main.py", "line": 3}],
    "content": [
        {"type": "diff", "path": "/home/user/project/main.py", "oldText": "a", "newText": "b"}
    ],
    "rawInput": {"path": "main.py", "old": "a", "new": "b"},
}


UPDATES: list[SessionNotification] = [
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Hello"},
            "messageId": "msg_1",
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "Thinking about it"},
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "Explain this file"},
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_1",
            "title": "Read main.py",
            "kind": "read",
            "status": "pending",
            "locations": [{"path": "/home/user/project/main.py"}],
            "content": [],
            "rawInput": {"path": "main.py"},
            "_meta": {"earshot": {"parentToolCallId": "call_0"}},
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_1",
            "status": "in_progress",
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_2",
            "content": [{"type": "terminal", "terminalId": "term_1"}],
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_1",
            "status": "completed",
            "title": "Read main.py",
            "locations": [{"path": "/home/user/project/main.py"}],
            "content": [
                {"type": "content", "content": {"type": "text", "text": "print('hi')"}},
                {
                    "type": "content",
                    "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                },
            ],
            "rawOutput": "print('hi')",
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read the code", "priority": "high", "status": "completed"},
                {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
            ],
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "usage_update",
            "used": 1200,
            "size": 200_000,
            "cost": {"amount": 0.0042, "currency": "USD"},
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {
                    "name": "compact",
                    "description": "Summarise the conversation so far to free context",
                    "input": {"hint": "optional instructions"},
                },
                {"name": "undo", "description": "Restore the files changed by the last batch"},
            ],
        },
    },
    {
        "sessionId": "sess_1",
        "update": {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "config_option_update",
            "configOptions": SET_CONFIG_OPTION_RESULT["configOptions"],
        },
    },
    {
        "sessionId": "sess_1",
        "update": {"sessionUpdate": "session_info_update", "title": "Explain main.py"},
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "Retrying the model call (attempt 2)",
            "description": "rate limited",
        },
    },
    {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "compaction_update",
            "compactionId": "cmp_1",
            "status": "completed",
            "summary": [{"type": "text", "text": "We fixed the bug."}],
        },
    },
    {
        "sessionId": "sess_1",
        "update": {"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "failed"},
    },
]

PERMISSION_PARAMS: RequestPermissionRequest = {
    "sessionId": "sess_1",
    "toolCall": TOOL_CALL_FIELDS,
    "options": [
        {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
        {
            "optionId": "allow_session",
            "name": "Allow `git status` for this session",
            "kind": "allow_always",
            "_meta": {"earshot": {"scope": "session", "rule": "git status"}},
        },
        {
            "optionId": "allow_always",
            "name": "Always allow `git status` in this project",
            "kind": "allow_always",
            "_meta": {"earshot": {"scope": "project", "rule": "git status"}},
        },
        {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    ],
}

QUESTION_AS_PERMISSION_PARAMS: RequestPermissionRequest = {
    "sessionId": "sess_1",
    "toolCall": {"toolCallId": "call_3", "title": "Which branch?"},
    "options": [
        {"optionId": "choice-0", "name": "main", "kind": "allow_once"},
        {"optionId": "decline", "name": "Don't answer", "kind": "reject_once"},
    ],
}

ELICITATION_PARAMS: CreateElicitationRequest = {
    "sessionId": "sess_1",
    "mode": "form",
    "message": "Which branch?",
    "toolCallId": "call_3",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "title": "Answer", "enum": ["main", "dev"]},
            "other": {
                "type": "string",
                "title": "Other",
                "description": "Your own answer instead of the choices",
            },
        },
        "required": [],
    },
}

MULTIPLE_CHOICE_ELICITATION_PARAMS: CreateElicitationRequest = {
    "sessionId": "sess_1",
    "mode": "form",
    "message": "Which files?",
    "toolCallId": "call_4",
    "requestedSchema": {
        "type": "object",
        # The server sends `"items": {"enum": [...]}` today, which the schema rejects (no
        # `"type": "string"`); the types reject it too (see test_protocol_types.py).
        "properties": {
            "answer": {
                "type": "array",
                "title": "Answer",
                "items": {"type": "string", "enum": ["a.py", "b.py"]},
            }
        },
        "required": ["answer"],
    },
}

READ_PARAMS: ReadTextFileRequest = {"sessionId": "sess_1", "path": "/home/user/project/main.py"}
WRITE_PARAMS: WriteTextFileRequest = {
    "sessionId": "sess_1",
    "path": "/home/user/project/main.py",
    "content": "print('hi')\n",
}
TERMINAL_PARAMS: CreateTerminalRequest = {
    "sessionId": "sess_1",
    "command": "bash",
    "args": ["-c", "pytest -q"],
    "cwd": "/home/user/project",
    "outputByteLimit": 64_000,
    "env": [{"name": "CI", "value": "1"}],
}

INVALID_PARAMS_ERROR: Error = {
    "code": -32602,
    "message": "invalid params: cwd must be an absolute path",
    "data": {"field": "cwd"},
}
INVALID_SETTINGS_ERROR: Error = {
    "code": -32001,
    "message": "Invalid settings: /home/user/.config/earshot/settings.json: model: not a string",
    "data": {"file": "/home/user/.config/earshot/settings.json", "key": "model"},
}

# ----------------------------------------------------------------------------- client answers

PERMISSION_SELECTED: RequestPermissionResponse = {
    "outcome": {"outcome": "selected", "optionId": "allow_once"}
}
PERMISSION_CANCELLED: RequestPermissionResponse = {"outcome": {"outcome": "cancelled"}}
ELICITATION_ACCEPTED: CreateElicitationResponse = {
    "action": "accept",
    "content": {"answer": ["a.py", "b.py"]},
}
ELICITATION_DECLINED: CreateElicitationResponse = {"action": "decline"}

# ----------------------------------------------------------------------------- the registry

EXAMPLES: list[tuple[str, Mapping[str, object]]] = [
    (AGENT_REQUESTS["initialize"][0], INITIALIZE_PARAMS),
    (AGENT_REQUESTS["initialize"][1], INITIALIZE_RESULT),
    (AGENT_REQUESTS["session/new"][0], NEW_SESSION_PARAMS),
    (AGENT_REQUESTS["session/new"][1], NEW_SESSION_RESULT),
    (AGENT_REQUESTS["session/set_config_option"][1], SET_CONFIG_OPTION_RESULT),
    (AGENT_REQUESTS["session/list"][1], LIST_SESSIONS_RESULT),
    (AGENT_REQUESTS["session/prompt"][0], PROMPT_PARAMS),
    (AGENT_REQUESTS["session/prompt"][1], PROMPT_RESULT),
    (AGENT_REQUESTS["session/prompt"][1], CANCELLED_PROMPT_RESULT),
    *((CLIENT_NOTIFICATIONS["session/update"], update) for update in UPDATES),
    (CLIENT_REQUESTS["session/request_permission"][0], PERMISSION_PARAMS),
    (CLIENT_REQUESTS["session/request_permission"][0], QUESTION_AS_PERMISSION_PARAMS),
    (CLIENT_REQUESTS["session/request_permission"][1], PERMISSION_SELECTED),
    (CLIENT_REQUESTS["session/request_permission"][1], PERMISSION_CANCELLED),
    (CLIENT_REQUESTS["elicitation/create"][0], ELICITATION_PARAMS),
    (CLIENT_REQUESTS["elicitation/create"][0], MULTIPLE_CHOICE_ELICITATION_PARAMS),
    (CLIENT_REQUESTS["elicitation/create"][1], ELICITATION_ACCEPTED),
    (CLIENT_REQUESTS["elicitation/create"][1], ELICITATION_DECLINED),
    (CLIENT_REQUESTS["fs/read_text_file"][0], READ_PARAMS),
    (CLIENT_REQUESTS["fs/write_text_file"][0], WRITE_PARAMS),
    (CLIENT_REQUESTS["terminal/create"][0], TERMINAL_PARAMS),
    ("Error", INVALID_PARAMS_ERROR),
    ("Error", INVALID_SETTINGS_ERROR),
]
"""(the `$defs` name the method tables give, the message): checked against the schema."""

# ----------------------------------------------------------------------------- typed code


def prompt_text(blocks: list[ContentBlock]) -> str:
    """Exhaustive over the content blocks: pyright narrows each case by its `type`."""
    parts: list[str] = []
    for block in blocks:
        match block["type"]:
            case "text":
                parts.append(block["text"])
            case "resource_link":
                parts.append(block["uri"])
            case "resource":
                parts.append(block["resource"]["uri"])
            case "image" | "audio":
                parts.append(f"[{block['mimeType']}]")
    return "\n".join(parts)


def elicited(response: CreateElicitationResponse) -> list[str]:
    """An open union: an unknown `action` is `CreateElicitationResponseOther`."""
    match response:
        case {"action": "accept", "content": content}:
            answer = (content or {}).get("answer")
            return answer if isinstance(answer, list) else [str(answer)]
        case _:
            return []


def shown(update: SessionUpdate) -> str:
    """Exhaustive over `session/update`: each case narrows to its variant."""
    match update["sessionUpdate"]:
        case "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk":
            content = update["content"]
            return content["text"] if content["type"] == "text" else content["type"]
        case "tool_call":
            return update["title"]
        case "tool_call_update":
            return update.get("title") or update["toolCallId"]
        case "plan":
            return "\n".join(entry["content"] for entry in update["entries"])
        case "available_commands_update":
            return " ".join(command["name"] for command in update["availableCommands"])
        case "current_mode_update":
            return update["currentModeId"]
        case "config_option_update":
            return " ".join(option["id"] for option in update["configOptions"])
        case "session_info_update":
            return update.get("title") or ""
        case "usage_update":
            return f"{update['used']}/{update['size']}"
        case "notice":
            return update["title"]
        case "compaction_update" | "compaction_summary_chunk":
            return update["compactionId"]
        case _:
            assert_never(update)


async def new_session(params: NewSessionRequest) -> NewSessionResponse:
    """The handler `acp_server/protocol/__init__.py` shows."""
    roots = [params["cwd"], *params.get("additionalDirectories", [])]
    commands = [s["command"] for s in params["mcpServers"] if "type" not in s]  # stdio
    return {"sessionId": f"sess_{len(roots)}_{len(commands)}", "modes": MODES}


HANDLERS: AgentRequestHandlers = {"session/new": new_session}
"""Checked method by method: a handler with the wrong params or result is an error."""


async def dispatch(method: str, params: JsonObject) -> object:
    """The one place untyped JSON becomes typed: after the params were validated."""
    handler = cast("Callable[[Any], Awaitable[object]] | None", HANDLERS.get(method))
    if handler is None:
        raise LookupError(method)
    return await handler(params)


async def read(send: ClientRequestSender, session_id: str, path: str) -> str:
    """The result's type follows the method."""
    reply = await send("fs/read_text_file", {"sessionId": session_id, "path": path})
    return reply["content"]
