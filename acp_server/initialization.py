"""`initialize` without the event loop: its params checked, its answer, and what the connection
keeps of it (`Initialized`).

Pure (params in; the result and the connection's state out), so that the one answer is given
both by the transport's handler (`AcpServer.initialize`) and before the event loop exists, when
it is the first line of `earshot --stdio` (`acp_server.first_line`). The state that later
behaviour depends on is in `Initialized`, and both paths start the connection with it
(`AcpServer.adopt`): what the client can do (`ClientCapabilities`: files, terminals,
elicitation, notices...) and whether it takes `$/cancel_request` (which its `clientInfo.name`
says for Zed). Standard library only, like every module it imports: it is on the path to the
reply.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

from acp_server.advertised import initialize_result, login_method
from acp_server.capabilities import ClientCapabilities, checked
from acp_server.framing import InvalidParams, RawObject

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_server.protocol.connection import AuthMethod, InitializeRequest, InitializeResponse


class Initialized:
    """What answering `initialize` gave: the result sent, and what the connection keeps. (A
    plain class: a `NamedTuple` compiles each string annotation, a `dataclass` imports `inspect`,
    both dear on the path to the reply.)"""

    __slots__ = ("client", "result")

    def __init__(self, result: InitializeResponse, client: ClientCapabilities) -> None:
        self.result = result
        self.client = client
        """The client's capabilities (and whether it takes `$/cancel_request`)."""


def checked_params(params: RawObject) -> InitializeRequest:
    """`initialize`'s params as the typed shape; -32602 naming the field at fault."""
    version = params.get("protocolVersion")
    if type(version) is not int or not 0 <= version <= 65535:
        raise InvalidParams("protocolVersion", "invalid params: protocolVersion must be a uint16")
    request: InitializeRequest = {
        "protocolVersion": version,
        "clientCapabilities": checked(params.get("clientCapabilities")),
    }
    info = params.get("clientInfo")
    if isinstance(info, dict):
        fields = cast("dict[str, object]", info)
        name, client_version = fields.get("name"), fields.get("version")
        if isinstance(name, str) and isinstance(client_version, str):
            # Read leniently, as the capabilities: a client is never refused for its name.
            request["clientInfo"] = {"name": name[:200], "version": client_version[:200]}
    return request


def answer(
    request: InitializeRequest, *, version: str, credentials_found: Callable[[], bool]
) -> Initialized:
    """The answer to `request` and the client it describes. `credentials_found` is asked only
    when the client could sign in through a terminal."""
    info = request.get("clientInfo") or {"name": "", "version": ""}
    client = ClientCapabilities.of(request.get("clientCapabilities", {}), info["name"])
    # Only a method the client can complete, and only while no key is found: Zed called the
    # old no-op "API key from environment" method and stayed on its sign-in screen.
    methods: list[AuthMethod] = []
    if client.terminal_auth and not credentials_found():
        methods.append(login_method(sys.executable))
    return Initialized(initialize_result(version, methods), client)


__all__ = ["Initialized", "answer", "checked_params"]
