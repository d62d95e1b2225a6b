"""What we advertise in `initialize` (what we learn from the client is in `capabilities`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp_server.protocol.connection import (
        AuthMethod,
        InitializeResponse,
        SessionCapabilities,
    )

PROTOCOL_VERSION = 1

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
