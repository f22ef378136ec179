"""Where a webhook may be sent: public addresses only, unless SUPPORTGATE_WEBHOOK_ALLOW admits
more; checked at subscription and at every attempt, against DNS rebinding (docs/webhooks.md)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from supportgate.errors import SupportgateError, UsageError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
ALLOW_VARIABLE = "SUPPORTGATE_WEBHOOK_ALLOW"


class TargetRefused(SupportgateError):
    """The URL's host is, or resolves to, an address webhooks are not sent to."""


@dataclass(frozen=True, slots=True)
class AllowList:
    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in (raw.strip() for raw in entries):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            name = _host_name(entry)
            if not name or "/" in name or ":" in name or _legacy_ipv4(name) is not None:
                raise UsageError(
                    f"{entry!r} is neither a CIDR (10.0.0.0/8, ::1/128) nor a host name",
                    field=ALLOW_VARIABLE,
                )
            hosts.add(name)
        return cls(networks=tuple(networks), hosts=frozenset(hosts))

    def admits_host(self, host: str) -> bool:
        return _host_name(host) in self.hosts

    def admits(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)


def refusal(address: IPAddress) -> str | None:
    """Why webhooks are not sent to `address` ("a loopback address", ...); None: they are."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for kind, applies in (
        ("an unspecified", address.is_unspecified),
        ("a loopback", address.is_loopback),
        ("a link-local", address.is_link_local),
        ("a multicast", address.is_multicast),
        ("a reserved", address.is_reserved),
        ("a private", address.is_private),
        ("a not globally reachable", not address.is_global),
    ):
        if applies:
            return f"{kind} address"
    return None


def check_subscription_host(host: str, port: int, allow: AllowList) -> None:
    """Raise TargetRefused unless webhooks may go to `host`: the address it names, or every
    address it resolves to now (none when it does not resolve yet: delivery checks again)."""
    if allow.admits_host(host):
        return
    literal = literal_address(host)
    if literal is not None:
        _check(host, literal, allow)
        return
    if _host_name(host) == "localhost" or _host_name(host).endswith(".localhost"):
        _check(host, ipaddress.ip_address("127.0.0.1"), allow)  # RFC 6761, resolved or not
        return
    try:
        addresses = resolve(host, port)
    except TargetRefused:
        return
    for address in addresses:
        _check(host, address, allow)


def delivery_address(host: str, port: int, allow: AllowList) -> IPAddress | None:
    """The checked address to connect to; None when the allow-list admits the host by name
    (connected to as usual). Refused unless every address it resolves to may be sent to."""
    if allow.admits_host(host):
        return None
    literal = literal_address(host)
    addresses = [literal] if literal is not None else resolve(host, port)
    for address in addresses:
        _check(host, address, allow)
    return addresses[0]


def literal_address(host: str) -> IPAddress | None:
    """The address a URL's host names itself (None: a DNS name). The shorthand forms the C
    resolver takes for IPv4 (`127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`) are refused:
    one address in a spelling meant to slip past a filter."""
    name = host.strip("[]")
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    legacy = _legacy_ipv4(name)
    if legacy is not None:
        raise TargetRefused(f"{host!r} is IPv4 address {legacy} in a shorthand form")
    return None


def _check(host: str, address: IPAddress, allow: AllowList) -> None:
    reason = None if allow.admits(address) else refusal(address)
    if reason is not None:
        shown = host if host.strip("[]") == str(address) else f"{host} (resolves to {address})"
        raise TargetRefused(
            f"{shown} is {reason}: webhooks go only to public addresses, unless "
            f"{ALLOW_VARIABLE} admits it"
        )


def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise TargetRefused(f"{host} does not resolve ({exc})") from exc
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in found))
    if not addresses:
        raise TargetRefused(f"{host} resolves to no address")
    return addresses


def _legacy_ipv4(name: str) -> ipaddress.IPv4Address | None:
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except (OSError, ValueError):
        return None


def _host_name(host: str) -> str:
    return host.strip().lower().rstrip(".")
