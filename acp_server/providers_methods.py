"""ACP's unstable provider methods: `providers/list`, `providers/set`, `providers/disable`
(`schema.unstable.json`; advertised as `agentCapabilities.providers`).

What they mean for earshot (which file is written, how a key in a header is kept) is the
composition root's (`earshot.provider_admin`, behind the `ProviderAdmin` port it gives the server,
or not: then the methods are not found). Here: the params are
checked, the answer shaped, and after a change every open session's model picker follows at once
(`config_option_update`, after the models of a new OpenAI-compatible server were asked), without a
restart. No header value is echoed in an answer or an error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from acp_server.framing import InvalidParams, RawObject, RpcError
from acp_server.jsonrpc import RequestContext, RequestHandler

JsonObject = dict[str, Any]

if TYPE_CHECKING:
    from pathlib import Path

    from acp_server.ports import ProviderAdmin, Workspaces
    from acp_server.session_table import SessionSlot

PROVIDERS_CAPABILITY: JsonObject = {}
"""`agentCapabilities.providers`: `{}` says the provider methods are supported."""


class ProviderMethods:
    """The three handlers, over the root's `ProviderAdmin` (None: not found here), its
    `Workspaces` (read again after a change) and the connection's sessions (their slots: a
    session answered but still being built counts too)."""

    def __init__(
        self,
        *,
        admin: ProviderAdmin | None,
        workspaces: Workspaces,
        slots: Callable[[], Sequence[SessionSlot]],
        changed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`changed`: told after a change (what `auth/status` says may have changed)."""
        self._admin = admin
        self._workspaces = workspaces
        self._slots = slots
        self._changed = changed

    def handlers(self) -> dict[str, RequestHandler]:
        return {
            "providers/list": self.list,
            "providers/set": self.set,
            "providers/disable": self.disable,
        }

    async def _config(self) -> ProviderAdmin:
        if self._admin is None:
            raise RpcError(-32601, "method not found: providers are not configurable here")
        return self._admin

    def _cwd(self) -> Path:
        """Whose settings: the first session's directory, else the process's."""
        for slot in self._slots():
            return slot.setup.cwd
        from pathlib import Path  # off the `initialize` path, as everywhere in the transport

        return Path.cwd()

    async def list(self, params: RawObject, context: RequestContext) -> JsonObject:
        config = await self._config()
        return {"providers": config.list_providers(self._cwd())}

    async def set(self, params: RawObject, context: RequestContext) -> JsonObject:
        config = await self._config()
        provider_id = _string(params, "providerId")
        api_type = _string(params, "apiType")
        base_url = _string(params, "baseUrl")
        raw_headers: object = params.get("headers") or {}
        if not isinstance(raw_headers, dict) or not all(
            isinstance(value, str) for value in cast("dict[str, Any]", raw_headers).values()
        ):
            raise InvalidParams("headers", "invalid params: headers is an object of strings")
        headers = cast("dict[str, str]", raw_headers)
        try:
            config.set_provider(
                self._cwd(),
                provider_id=provider_id,
                api_type=api_type,
                base_url=base_url,
                headers=headers,
            )
        except ValueError as error:
            raise _invalid(error) from None
        context.after_response.append(self._follow)
        return {}

    async def disable(self, params: RawObject, context: RequestContext) -> JsonObject:
        config = await self._config()
        provider_id = _string(params, "providerId")
        try:
            config.disable_provider(self._cwd(), provider_id)
        except ValueError as error:
            raise _invalid(error) from None
        context.after_response.append(self._follow)
        return {}

    async def _follow(self) -> None:
        """Every session's picker shows the providers as they now are. A session still being
        built (`session/new` is answered first) read the settings before this change: it is
        waited for, then refreshed like the others."""
        slots = self._slots()
        for cwd in dict.fromkeys(slot.setup.cwd for slot in slots):
            self._workspaces.open(cwd)  # its settings read again
        if self._changed is not None:
            await self._changed()
        for slot in slots:
            await slot.settled()
            live = slot.live
            if live is None or live.closed:
                continue
            await live.refresh_models()
            await live.pickers.send_options()


def _string(params: RawObject, name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidParams(name, f"invalid params: {name} is a non-empty string")
    return value


def _invalid(error: ValueError) -> RpcError:
    field = getattr(error, "field", None)
    if isinstance(field, str):
        return InvalidParams(field, f"invalid params: {error}")
    from acp_server.errors import settings_error

    return settings_error(error)  # the user settings file: -32001, naming it


__all__ = ["PROVIDERS_CAPABILITY", "ProviderMethods"]
