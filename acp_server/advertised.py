"""What we advertise in `initialize` (what we learn from the client is in `capabilities`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp_server.protocol.connection import (
        AuthMethod,
        InitializeResponse,
        SessionCapabilities,
    )
    from acp_server.protocol.v2.unstable.connection import AuthMethod as V2AuthMethod
    from acp_server.protocol.v2.unstable.connection import (
        InitializeResponse as V2InitializeResponse,
    )

PROTOCOL_VERSION = 1
V2_PROTOCOL_VERSION = 2
"""The ACP v2 draft (`schema/v2/`), served beside v1 to a client that asks for it."""


def negotiated_version(requested: int) -> int:
    """The version a connection speaks: v2 for a client asking for 2, and for one asking for
    a version we do not know (higher): the highest we speak; v1 for anything lower, as before
    v2 existed (a client asking for 0 got 1)."""
    return V2_PROTOCOL_VERSION if requested >= V2_PROTOCOL_VERSION else PROTOCOL_VERSION


AUTH_METHOD_ID = "env"
"""The method earlier versions advertised; `authenticate` still takes it (and does nothing)."""
LOGIN_METHOD_ID = "earshot-login"


def login_method(command: str) -> AuthMethod:
    """The terminal sign-in (`earshot login`): the client runs earshot's own command with
    `login` appended; Zed's `_meta["terminal-auth"]` takes a command line of its own, `command`
    (this interpreter) `-m earshot login`. A zero exit means the key is saved."""
    return {
        "type": "terminal",
        "id": LOGIN_METHOD_ID,
        "name": "Set an API key",
        "description": "Runs `earshot login` in a terminal: pick a provider, paste its key; it is "
        "saved in earshot's user settings (mode 600).",
        "args": ["login"],
        "_meta": {
            "terminal-auth": {
                "label": "earshot login",
                "command": command,
                "args": ["-m", "earshot", "login"],
            }
        },
    }


def initialize_result(
    version: str, auth_methods: list[AuthMethod] | None = None
) -> InitializeResponse:
    """The `initialize` result: only capabilities that are wired, with the unstable ones
    (`schema.unstable.json`, README "ACP surface"): `sessionCapabilities.fork` (`session/fork`),
    `.title` (`session/set_title`), `.status` (`session/status`), `.archive`
    (`session/archive|unarchive`, the `archived` filter of `session/list`), `.systemPrompt`
    (append, and `override`), `providers` (`providers/list|set|disable`), `auth.status`
    (`auth/status`) and `mcpCapabilities.acp` (MCP servers over `mcp/message`). A client that
    calls none of them sees what it saw before they existed. `auth_methods`: only methods the
    client can complete (`AcpServer.initialize`); none by default."""
    result = _stable_result(version)
    result["authMethods"] = auth_methods or []
    capabilities = cast("dict[str, dict[str, object]]", result)["agentCapabilities"]
    capabilities["providers"] = {}
    cast("dict[str, object]", capabilities["mcpCapabilities"])["acp"] = True
    cast("dict[str, object]", capabilities["auth"])["status"] = {}
    sessions = cast("dict[str, object]", capabilities["sessionCapabilities"])
    sessions.update(
        fork={},
        title={},
        status={},
        archive={},
        systemPrompt={"mode": {"override": {}}},
    )
    return result


def _stable_result(version: str) -> InitializeResponse:
    sessions: SessionCapabilities = {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        "additionalDirectories": {},
    }
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": sessions,
            "auth": {"logout": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": "earshot", "title": "earshot", "version": version},
    }


def login_method_v2(command: str) -> V2AuthMethod:
    """`login_method` in v2's shape (`methodId`): the client runs it, never `auth/login`."""
    v1 = login_method(command)
    return {
        "type": "terminal",
        "methodId": v1["id"],
        "name": v1["name"],
        "description": v1.get("description"),
        "args": list(v1.get("args", [])),
        "_meta": v1.get("_meta"),
    }


def initialize_result_v2(
    version: str, auth_methods: list[V2AuthMethod] | None = None
) -> V2InitializeResponse:
    """The v2 `initialize` result: the baseline session methods (`session: {}` means new, list,
    resume, close, prompt, cancel and update) and what is wired beyond them, the unstable
    `session.fork`, `.title`, `.status`, `.archive`, `.systemPrompt`, `session.mcp.acp`,
    `auth.status` and `providers` among them (served by v1's handlers: the same shapes). No
    client fs, terminal or mode capability exists in v2: files and commands are local, terminals
    are earshot's own (`acp_server.v2`)."""
    result: V2InitializeResponse = {
        "protocolVersion": V2_PROTOCOL_VERSION,
        "info": {"name": "earshot", "title": "earshot", "version": version},
        "capabilities": {
            "session": {
                "prompt": {"image": {}, "embeddedContext": {}},
                "mcp": {"stdio": {}, "http": {}, "acp": {}},
                "delete": {},
                "additionalDirectories": {},
                "fork": {},
                "title": {},
                "status": {},
                "archive": {},
                "systemPrompt": {"mode": {"override": {}}},
            },
            "providers": {},
            "auth": {"status": {}},
        },
    }
    if auth_methods:
        # Advertising a method means taking `auth/login` and `auth/logout` too.
        result["authMethods"] = auth_methods
    return result
