"""Where webhooks may go (supportgate/webhooks/targets.py): every spelling of a loopback,
private, link-local, multicast, reserved or unspecified address is refused at subscription,
naming `url`, and so are credentials in the URL; the allow-list admits what it lists."""

from __future__ import annotations

import ipaddress

import pytest

from supportgate.errors import UsageError
from supportgate.webhooks.services import check_url
from supportgate.webhooks.targets import AllowList, TargetRefused, delivery_address

pytestmark = pytest.mark.fast

NOBODY = AllowList()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/hooks", "loopback"),
        ("http://127.1/hooks", "shorthand"),
        ("http://0x7f000001/hooks", "shorthand"),
        ("http://2130706433/hooks", "shorthand"),
        ("http://0177.0.0.1/hooks", "not a valid URL"),  # httpx refuses this one itself
        ("http://[::1]/hooks", "loopback"),
        ("http://[::ffff:127.0.0.1]/hooks", "loopback"),
        ("http://[::ffff:7f00:1]/hooks", "loopback"),
        ("http://[::ffff:10.0.0.1]/hooks", "private"),
        ("http://0.0.0.0/hooks", "unspecified"),
        ("http://[::]/hooks", "unspecified"),
        ("http://10.1.2.3/hooks", "private"),
        ("http://172.16.0.1/hooks", "private"),
        ("http://192.168.1.1/hooks", "private"),
        ("http://[fd00::1]/hooks", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://[fe80::1]/hooks", "link-local"),
        ("http://224.0.0.1/hooks", "multicast"),
        ("http://[ff02::1]/hooks", "multicast"),
        ("http://240.0.0.1/hooks", "reserved"),
        ("http://100.64.0.1/hooks", "not globally reachable"),
        ("http://localhost:8080/hooks", "loopback"),
        ("http://LOCALHOST./hooks", "loopback"),
        ("http://hooks.localhost/hooks", "loopback"),
        ("https://user:pass@hooks.example.com/a", "credentials"),
        ("https://token@hooks.example.com/a", "credentials"),
        ("https://user:pass@127.0.0.1/a", "credentials"),
    ],
)
def test_internal_targets_are_refused_naming_url(url: str, reason: str) -> None:
    with pytest.raises(UsageError, match=reason) as raised:
        check_url(url, NOBODY)
    assert raised.value.field == "$.url"


@pytest.mark.parametrize(
    ("allow", "url"),
    [
        (["127.0.0.0/8"], "http://127.0.0.1:9000/hooks"),
        (["127.0.0.1"], "http://127.0.0.1:9000/hooks"),
        (["::1/128"], "http://[::1]:9000/hooks"),
        (["10.0.0.0/8", "hooks.internal"], "http://10.20.30.40/hooks"),
        (["hooks.internal"], "https://Hooks.Internal/a"),
        (["localhost"], "http://localhost:8080/hooks"),
        (["127.0.0.0/8"], "http://localhost:8080/hooks"),  # what it resolves to is admitted
    ],
)
def test_the_allow_list_admits_what_it_lists(allow: list[str], url: str) -> None:
    assert check_url(url, AllowList.parse(allow)) == url


def test_the_allow_list_admits_nothing_else() -> None:
    allow = AllowList.parse(["127.0.0.1/32", "hooks.internal"])
    for url in ("http://127.0.0.2/", "http://[::1]/", "http://10.0.0.1/"):
        with pytest.raises(UsageError, match="SUPPORTGATE_WEBHOOK_ALLOW"):
            check_url(url, allow)


def test_public_addresses_are_accepted() -> None:
    for url in ("https://93.184.215.14/hooks", "https://[2606:4700::6810:84e5]:8443/x"):
        assert check_url(url, NOBODY) == url


@pytest.mark.parametrize("entry", ["not a host/x", "10.0.0.0/33", "127.1", "a:b"])
def test_a_bad_allow_list_entry_names_the_variable(entry: str) -> None:
    with pytest.raises(UsageError, match="SUPPORTGATE_WEBHOOK_ALLOW"):
        AllowList.parse([entry])


def test_delivery_connects_to_the_address_it_checked() -> None:
    loopback = AllowList.parse(["127.0.0.0/8"])
    assert delivery_address("localhost", 80, loopback) == ipaddress.ip_address("127.0.0.1")
    assert delivery_address("hooks.internal", 80, AllowList.parse(["hooks.internal"])) is None
    with pytest.raises(TargetRefused, match="loopback"):
        delivery_address("localhost", 80, NOBODY)
    with pytest.raises(TargetRefused, match="does not resolve"):
        delivery_address("no-such-host.invalid", 80, NOBODY)
