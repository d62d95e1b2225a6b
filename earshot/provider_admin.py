"""Providers as the editor configures them: ACP's unstable `providers/list`, `providers/set` and
`providers/disable` (composition policy; `acp_server.providers_methods` speaks the protocol).

`list` gives every built-in provider and every provider the settings define: its protocol and
base URL (`current`, null when turned off), and in `_meta.earshot` its name, earshot's wire API,
whether credentials were found and the NAMES of configured headers. Never a key or a header
value.

`set` writes `providers.<id>` to the USER settings file (`$XDG_CONFIG_HOME/earshot/settings.json`,
where `apiKey` values already live): `api`, `baseUrl` and `headers` are replaced, other keys of
the entry (`apiKeyEnv`, `apiKey`, `streamTimeouts`) kept, `enabled: false` dropped. Headers can
carry a key (`Authorization: Bearer ...`), so they are written only to a file nobody else can
read: a new settings file is created with mode 0600, and an existing file whose mode lets group
or others read it is refused with an error saying what to do (`chmod 600 FILE`, or an
`apiKeyEnv` variable) rather than silently holding a key others can read. Nothing of a header's
value reaches an error, a log line or a reply.

`disable` writes `providers.<id>.enabled: false` to the user settings: the provider's models
leave the picker, and none of its models can be built (`Composition.disabled_providers`). No
provider is `required`: earshot can run on any of them.

Protocols: `anthropic`, `openai` (earshot's `openai-chat`; `openai-responses` providers are
listed as `openai` too, with the wire API in `_meta`), `azure` (`openai-responses`), `vertex`
(`gemini`); earshot's own wire APIs are accepted as `_openai-chat`, `_openai-responses`,
`_anthropic` and `_gemini`. `bedrock` and the test-only `scripted` cannot be set.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agent.settings import SettingsError, rewrite_settings

if TYPE_CHECKING:
    from earshot.compose import Composition
    from providers.model import WireApi

PRIVATE_MODE = 0o600
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SET_PROTOCOLS: Mapping[str, WireApi] = {
    "anthropic": "anthropic",
    "openai": "openai-chat",
    "azure": "openai-responses",
    "vertex": "gemini",
    "_openai-chat": "openai-chat",
    "_openai-responses": "openai-responses",
    "_anthropic": "anthropic",
    "_gemini": "gemini",
}
_SDK_DEFAULT_URLS: Mapping[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "google": "https://generativelanguage.googleapis.com",
    "google-vertex": "https://aiplatform.googleapis.com",
}


class ProviderEditError(ValueError):
    """A `set` or `disable` that cannot be done; `field` names the request field at fault
    (None: the settings file). The message never holds a header value."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


def protocol_of(api: str, provider_id: str) -> str:
    match api:
        case "anthropic":
            return "anthropic"
        case "openai-chat" | "openai-responses":
            return "azure" if provider_id == "azure" else "openai"
        case "gemini":
            return "vertex" if provider_id == "google-vertex" else "_gemini"
        case _:
            return f"_{api}"


def list_providers(composition: Composition) -> list[dict[str, Any]]:
    """`ProviderInfo` for each provider (see the module docstring)."""
    from providers.registry import all_providers

    settings = composition.settings
    specs = {spec.id: spec for spec in all_providers()}
    disabled = composition.disabled_providers()
    credentialed = set(composition.credentialed())
    found: list[dict[str, Any]] = []
    for provider_id in dict.fromkeys([*specs, *settings.providers]):
        spec = specs.get(provider_id)
        entry = settings.providers.get(provider_id)
        api: str = (entry.api if entry else None) or (spec.api if spec else "openai-chat")
        base_url = (
            (entry.base_url if entry else None)
            or (spec.base_url if spec else None)
            or _SDK_DEFAULT_URLS.get(provider_id, "")
        )
        protocol = protocol_of(api, provider_id)
        current = None if provider_id in disabled else {"apiType": protocol, "baseUrl": base_url}
        found.append(
            {
                "providerId": provider_id,
                "supported": [protocol],
                "required": False,
                "current": current,
                "_meta": {
                    "earshot": {
                        "name": spec.name if spec else provider_id,
                        "wireApi": api,
                        "credentials": provider_id in credentialed,
                        "configured": entry is not None,
                        "headers": sorted(entry.headers) if entry else [],
                    }
                },
            }
        )
    return found


def set_provider(
    user_file: Path,
    provider_id: str,
    protocol: str,
    base_url: str,
    headers: Mapping[str, str],
) -> None:
    """Write `providers.<provider_id>` to the user settings (see the module docstring).

    Raises:
        ProviderEditError: a bad field, a protocol earshot cannot speak, headers for a settings
            file others can read, or a settings file that is not valid.
    """
    from providers.registry import provider_spec

    _check_id(provider_id)
    api = _SET_PROTOCOLS.get(protocol)
    spec = provider_spec(provider_id)
    if api is not None and spec is not None and protocol_of(spec.api, provider_id) == protocol:
        api = spec.api  # `openai` keeps OpenAI's Responses API, Azure its own
    if api is None:
        known = ", ".join(_SET_PROTOCOLS)
        raise ProviderEditError(
            "apiType", f"earshot cannot use the protocol {protocol!r} ({known})"
        )
    if not re.match(r"^https?://[^\s/]+", base_url):
        raise ProviderEditError("baseUrl", "baseUrl must be an http or https URL")
    for name in headers:
        if not name or not re.match(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", name):
            raise ProviderEditError("headers", "a header name is not a valid HTTP header name")
    if headers:
        _require_private(user_file)

    def edit(data: dict[str, Any]) -> None:
        providers = cast("dict[str, Any]", data.setdefault("providers", {}))
        old = providers.get(provider_id)
        entry: dict[str, Any] = dict(cast("dict[str, Any]", old)) if isinstance(old, dict) else {}
        for key in ("api", "baseUrl", "headers", "enabled", "script"):
            entry.pop(key, None)
        entry.update({"api": api, "baseUrl": base_url.rstrip("/")})
        if headers:
            entry["headers"] = dict(headers)
        providers[provider_id] = entry

    _write(user_file, edit)


def disable_provider(user_file: Path, provider_id: str, known: set[str]) -> None:
    """Write `providers.<provider_id>.enabled: false` to the user settings.

    Raises:
        ProviderEditError: an unknown provider, or a settings file that is not valid.
    """
    _check_id(provider_id)
    if provider_id not in known:
        raise ProviderEditError("providerId", f"no provider {provider_id!r}")

    def edit(data: dict[str, Any]) -> None:
        providers = cast("dict[str, Any]", data.setdefault("providers", {}))
        old = providers.get(provider_id)
        entry: dict[str, Any] = dict(cast("dict[str, Any]", old)) if isinstance(old, dict) else {}
        entry["enabled"] = False
        providers[provider_id] = entry

    _write(user_file, edit)


def _check_id(provider_id: str) -> None:
    if not _ID.match(provider_id):
        raise ProviderEditError(
            "providerId", "a provider id is letters, digits, '.', '_' and '-' (at most 64)"
        )


def _require_private(user_file: Path) -> None:
    try:
        mode = stat.S_IMODE(user_file.stat().st_mode)
    except FileNotFoundError:
        return  # created with PRIVATE_MODE
    except OSError as error:
        raise ProviderEditError(None, f"cannot check {user_file}: {error.strerror}") from None
    if mode & 0o077:
        raise ProviderEditError(
            "headers",
            f"headers can hold a key, and your settings file {user_file} can be read by others "
            f"(mode {mode:04o}): run `chmod 600 {user_file}` and try again, or put the key in an "
            "environment variable and name it in providers.<id>.apiKeyEnv",
        )


def _write(user_file: Path, edit: Any) -> None:
    try:
        rewrite_settings(user_file, "user", edit, new_mode=PRIVATE_MODE)
    except SettingsError as error:
        raise ProviderEditError(None, str(error)) from None
    except OSError as error:
        raise ProviderEditError(None, f"cannot write {user_file}: {error.strerror}") from None


__all__ = [
    "PRIVATE_MODE",
    "ProviderEditError",
    "disable_provider",
    "list_providers",
    "protocol_of",
    "set_provider",
]
