"""What we advertise in `initialize`. Standard library only: the start-up fast path builds the
`initialize` reply from this before anything heavy is imported."""

from __future__ import annotations

from acp_server.wire import JsonObject

PROTOCOL_VERSION = 1

AUTH_METHOD_ID = "env"
AUTH_DESCRIPTION = (
    "Set your provider's API key in its environment variable before the editor starts earshot "
    "(e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), or name it in "
    "~/.config/earshot/settings.json under providers.<id>.apiKeyEnv (or apiKey), "
    "and pick the model with the settings key `model`."
)


def initialize_result(version: str) -> JsonObject:
    """The `initialize` result: only capabilities that are wired."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
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
                "fork": {},
            },
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
