"""What we advertise in `initialize` (what we learn from the client is in `capabilities`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp_server.protocol.connection import InitializeResponse, SessionCapabilities

PROTOCOL_VERSION = 1

AUTH_METHOD_ID = "env"
AUTH_DESCRIPTION = (
    "Set your provider's API key in its environment variable before the editor starts earshot "
    "(e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), or name it in "
    "~/.config/earshot/settings.json under providers.<id>.apiKeyEnv (or apiKey), "
    "and pick the model with the settings key `model`."
)


def initialize_result(version: str) -> InitializeResponse:
    """The `initialize` result: only capabilities that are wired, with the unstable ones
    (`schema.unstable.json`): `sessionCapabilities.fork` (`session/fork`) and `providers`
    (`providers/list`, `providers/set`, `providers/disable`)."""
    result = _stable_result(version)
    capabilities = cast("dict[str, dict[str, object]]", result)["agentCapabilities"]
    capabilities["providers"] = {}
    sessions = cast("dict[str, object]", capabilities["sessionCapabilities"])
    sessions["fork"] = {}
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
        "authMethods": [
            {
                "id": AUTH_METHOD_ID,
                "name": "API key from environment",
                "description": AUTH_DESCRIPTION,
            }
        ],
        "agentInfo": {"name": "earshot", "title": "earshot", "version": version},
    }
