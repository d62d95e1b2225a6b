"""`initialize`, answered as a pure function of its params: which protocol version the
connection speaks, what the client can do, and the result to send.

Version negotiation: a client asking for `protocolVersion: 2` gets the ACP v2 draft, and so does
one asking for a version we do not know (higher): the highest we speak (`schema/v2/`, served by
`acp_server.v2` from the same core). Anything lower gets v1 exactly as before v2 existed. The
server keeps what this returns (`AcpServer.initialize`); nothing here touches the connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from acp_server import params as p
from acp_server.advertised import (
    PROTOCOL_VERSION,
    V2_PROTOCOL_VERSION,
    initialize_result,
    initialize_result_v2,
    login_method,
    login_method_v2,
    negotiated_version,
)
from acp_server.capabilities import ClientCapabilities
from acp_server.framing import InvalidParams, Message, RawObject

if TYPE_CHECKING:
    from acp_server.protocol.connection import AuthMethod
    from acp_server.protocol.v2.unstable.connection import AuthMethod as V2AuthMethod


@dataclass(frozen=True, slots=True)
class Handshake:
    """What `initialize` settled."""

    protocol: int
    """1 or 2: the version the connection speaks from now on."""
    client: ClientCapabilities
    result: Message
    """The `initialize` result, in the negotiated version's shape."""


def handshake(
    params: RawObject,
    *,
    version: str,
    credentials_found: Callable[[], bool],
    interpreter: str,
) -> Handshake:
    """The answer to `initialize` (`version`: earshot's; `credentials_found`: whether a provider
    key is set, asked only for a client that can sign in through a terminal; `interpreter`: the
    command that runs earshot, for that sign-in method).

    Raises:
        InvalidParams: `protocolVersion` is not a uint16.
    """
    requested = params.get("protocolVersion")
    if type(requested) is not int or not 0 <= requested <= 65535:
        raise InvalidParams("protocolVersion", "invalid params: protocolVersion must be a uint16")
    if negotiated_version(requested) == V2_PROTOCOL_VERSION:
        return _v2(params, version, credentials_found, interpreter)
    request = p.initialize(params)
    info = request.get("clientInfo") or {"name": "", "version": ""}
    client = ClientCapabilities.of(request.get("clientCapabilities", {}), info["name"])
    # Only a method the client can complete, and only while no key is found: Zed called the
    # old no-op "API key from environment" method and stayed on its sign-in screen.
    methods: list[AuthMethod] = []
    if client.terminal_auth and not credentials_found():
        methods.append(login_method(interpreter))
    result = initialize_result(version, methods)
    return Handshake(PROTOCOL_VERSION, client, cast("Message", result))


def _v2(
    params: RawObject, version: str, credentials_found: Callable[[], bool], interpreter: str
) -> Handshake:
    """v2's params are read leniently, as v1's capabilities are: `info` and `capabilities`
    (a client of a later version may send members v2 does not have)."""
    client = ClientCapabilities.of_v2(params.get("capabilities"))
    methods: list[V2AuthMethod] = []
    if client.terminal_auth and not credentials_found():
        methods.append(login_method_v2(interpreter))
    result = initialize_result_v2(version, methods)
    return Handshake(V2_PROTOCOL_VERSION, client, cast("Message", result))
