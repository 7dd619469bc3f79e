"""Screening of push targets: the operator's allowlist, https, the SDK's address policy."""

from __future__ import annotations

import ipaddress

import pytest

from agent.push.targets import AddressRange, PushTargets


@pytest.mark.parametrize(
    ("allowed", "address", "inside"),
    [
        ("10.1.0.0/16", "10.1.255.7", True),
        ("10.1.0.0/16", "10.2.0.1", False),
        ("127.0.0.1", "127.0.0.1", True),
        ("127.0.0.1", "127.0.0.2", False),
        ("0.0.0.0/0", "203.0.113.9", True),
        ("::1", "::1", True),
        ("[::1]", "::1", True),
        ("127.0.0.1", "::ffff:127.0.0.1", False),  # another version: not the same address
        ("fd00::/8", "fd12::1", True),
    ],
)
def test_a_range_holds_its_prefix(allowed: str, address: str, inside: bool) -> None:
    assert (ipaddress.ip_address(address) in AddressRange.parse(allowed)) is inside


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "::/129", "10.0.0.0/-1", "1.2.3.4/x"])
def test_a_prefix_out_of_range_is_not_a_range(bad: str) -> None:
    with pytest.raises(ValueError):
        AddressRange.parse(bad)


def test_what_is_not_an_address_is_a_host_name() -> None:
    targets = PushTargets.parse(" Hooks.Internal. , 127.0.0.1,,10.0.0.0/8 ")
    assert targets.names == frozenset({"hooks.internal"})
    assert [str(r.base) for r in targets.ranges] == ["127.0.0.1", "10.0.0.0"]


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("http://127.0.0.1:8080/hook", False),
        ("http://hooks.internal/hook", False),
        ("http://HOOKS.internal./hook", False),
        ("http://127.0.0.2/hook", True),  # loopback, not in the list
        ("https://10.9.9.9/hook", False),
        ("http://[::1]/hook", True),
        ("ftp://127.0.0.1/hook", True),
        ("http://u:p@127.0.0.1/hook", True),
        ("http://127.0.0.1/\u00e9", True),
        ("http://127.0.0.1/a b", True),
        ("http://127.0.0.1:70000/", True),
        ("https://169.254.169.254/", True),
        ("https://192.168.1.1/", True),
        ("", True),
    ],
)
async def test_only_allowed_or_public_https_targets_pass(url: str, refused: bool) -> None:
    targets = PushTargets.parse("127.0.0.1, hooks.internal, 10.0.0.0/8")
    assert (await targets.refusal(url) is not None) is refused
