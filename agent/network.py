"""Which hosts and addresses are local: loopback, private, link-local, unique-local, and every
other address that is not on the public internet.

A fetch to such an address reaches the user's machine or network (a database on localhost, a
router's admin page, the cloud metadata service at 169.254.169.254) rather than the web, so the
permission policy asks before it happens (`agent.permissions.policy`), and the fetch tool checks
what a host name resolves to before it connects (`agent.tools.fetch`).

`local_host` looks at a host as written (no I/O): an IP literal in any form the C resolver
accepts (`127.1`, `2130706433`, `0x7f.1`, `[::ffff:127.0.0.1]`), a `localhost` name, a name
under a suffix that only exists on private networks (`.internal`, `.local`, `.home.arpa`...), a
cloud metadata name, or a name without a dot (resolved in the local search domains).
`local_address` classifies a resolved address.
"""

from __future__ import annotations

import ipaddress
import socket

import anyio

_LOCAL_NAMES = frozenset(
    {
        *("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"),
        # cloud metadata services (their addresses are link-local: 169.254.169.254, fd00:ec2::254)
        *("metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"),
    }
)
_LOCAL_SUFFIXES = (
    ".localhost",  # RFC 6761: loopback
    ".local",  # RFC 6762: multicast DNS on the local link
    ".internal",  # reserved by ICANN (2024) for private use; GCP and AWS internal names
    ".home.arpa",  # RFC 8375: home networks
    ".localdomain",
    ".lan",
    ".home",
    ".corp",  # never delegated: names on private networks
)
"""Names that mean the local machine or network whatever they resolve to (no lookup is needed
to know it, and behind a proxy none is made: `agent.tools.fetch_guard`)."""
_LEGACY_IPV4 = frozenset("0123456789abcdefx.")


def local_address(address: str) -> bool:
    """Whether `address` (an IP address as text, possibly with an IPv6 zone) is not a public
    internet address: loopback, private, link-local, unique-local, shared, reserved,
    unspecified or multicast. IPv4-mapped and 6to4 IPv6 addresses are judged by the IPv4
    address they carry. Text that is not an address is not local."""
    ip = _parse(address)
    return ip is not None and _not_public(ip)


def local_host(host: str) -> bool:
    """Whether `host`, as written in a URL, names a local address without any lookup."""
    name = host.strip().lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name in _LOCAL_NAMES or name.endswith(_LOCAL_SUFFIXES):
        return True
    ip = _parse(name)
    if ip is None and name and set(name) <= _LEGACY_IPV4:
        # `127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`: the resolver reads these as IPv4.
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            ip = None
    if ip is None:
        # A name without a dot is looked up in the local search domains.
        return bool(name) and "." not in name and ":" not in name
    return _not_public(ip)


def _parse(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _not_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is not None:
            return _not_public(carried)
        if ip.teredo is not None:
            return True  # a tunnel: where it ends is not for us to judge
    return ip.is_multicast or not ip.is_global


async def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to for a TCP connection (an IP literal resolves to itself).

    Raises:
        OSError: the name does not resolve.
    """
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses
