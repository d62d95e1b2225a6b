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

Version negotiation (`respond`): a client asking for `protocolVersion: 2` gets the ACP v2 draft,
and so does one asking for a version we do not know (higher): the highest we speak
(`schema/v2/`, served by `acp_server.v2` from the same core). Anything lower gets v1 exactly as
before v2 existed. The same on both paths: a first line that is a v2 `initialize` is answered
before the event loop too.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

from acp_server.advertised import (
    PROTOCOL_VERSION,
    V2_PROTOCOL_VERSION,
    initialize_result,
    initialize_result_v2,
    login_method,
    login_method_v2,
    negotiated_version,
)
from acp_server.capabilities import ClientCapabilities, checked
from acp_server.framing import InvalidParams, RawObject

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_server.protocol.connection import AuthMethod, InitializeRequest, InitializeResponse
    from acp_server.protocol.v2.unstable.connection import AuthMethod as V2AuthMethod
    from acp_server.protocol.v2.unstable.connection import (
        InitializeResponse as V2InitializeResponse,
    )


class Initialized:
    """What answering `initialize` gave: the result sent, and what the connection keeps. (A
    plain class: a `NamedTuple` compiles each string annotation, a `dataclass` imports `inspect`,
    both dear on the path to the reply.)"""

    __slots__ = ("client", "protocol", "result")

    def __init__(
        self,
        result: InitializeResponse | V2InitializeResponse,
        client: ClientCapabilities,
        protocol: int = PROTOCOL_VERSION,
    ) -> None:
        self.result = result
        """The `initialize` result, in the negotiated version's shape."""
        self.client = client
        """The client's capabilities (and whether it takes `$/cancel_request`)."""
        self.protocol = protocol
        """1 or 2: the version the connection speaks from now on."""


def respond(
    params: RawObject, *, version: str, credentials_found: Callable[[], bool]
) -> Initialized:
    """The answer to `initialize` in the version it negotiates (`version`: earshot's;
    `credentials_found`: whether a provider key is set, asked only for a client that can sign in
    through a terminal).

    Raises:
        InvalidParams: the params are not an `initialize`'s (`protocolVersion` not a uint16).
    """
    requested = _protocol_version(params)
    if negotiated_version(requested) == V2_PROTOCOL_VERSION:
        return _v2(params, version, credentials_found)
    return answer(checked_params(params), version=version, credentials_found=credentials_found)


def _protocol_version(params: RawObject) -> int:
    requested = params.get("protocolVersion")
    if type(requested) is not int or not 0 <= requested <= 65535:
        raise InvalidParams("protocolVersion", "invalid params: protocolVersion must be a uint16")
    return requested


def _v2(params: RawObject, version: str, credentials_found: Callable[[], bool]) -> Initialized:
    """v2's params are read leniently, as v1's capabilities are: `info` and `capabilities`
    (a client of a later version may send members v2 does not have)."""
    client = ClientCapabilities.of_v2(params.get("capabilities"))
    methods: list[V2AuthMethod] = []
    if client.terminal_auth and not credentials_found():
        methods.append(login_method_v2(sys.executable))
    return Initialized(initialize_result_v2(version, methods), client, V2_PROTOCOL_VERSION)


def checked_params(params: RawObject) -> InitializeRequest:
    """A v1 `initialize`'s params as the typed shape; -32602 naming the field at fault."""
    request: InitializeRequest = {
        "protocolVersion": _protocol_version(params),
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


__all__ = ["Initialized", "answer", "checked_params", "respond"]
