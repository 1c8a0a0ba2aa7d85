"""The host policy of Launch: every spelling Chromium reads as a local address is local, and the policy's settings
decide what opens (the browser tests check the same against real Chromium)."""

from __future__ import annotations

import pytest

from uivenus.envs.hosts import HostPolicy, HostPolicyError, Origin, canonical_host, is_local, launch_url


@pytest.mark.parametrize("spelling", [
    "127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "%31%32%37.0.0.1", "１２７.０.０.１",
    "127。0。0。1", "LOCALHOST.", "app.localhost", "::1", "::ffff:127.0.0.1", "0.0.0.0", "10.1.2.3", "172.16.0.1",
    "192.168.1.1", "169.254.169.254", "fe80::1", "100.64.0.1",
])
def test_local_addresses_in_every_spelling(spelling: str) -> None:
    assert is_local(canonical_host(spelling))


def test_public_hosts_are_not_local_and_urls_are_read_as_chromium_reads_them() -> None:
    assert not any(is_local(canonical_host(h)) for h in ("example.com", "8.8.8.8", "2606:4700::1111", "localhost.com"))
    assert Origin.of("http://127.0.0.1\\@example.com/") == Origin("127.0.0.1", 80)  # '\' ends the host
    assert Origin.of("https://user:pw@EXAMPLE.com./x") == Origin("example.com", 443)
    assert Origin.of("http://[::1]:8000/") == Origin("::1", 8000)
    assert Origin.of("http://127.0.0.1:99999/") is None and Origin.of("https:///path") is None
    assert launch_url(" example.com/a ") == "https://example.com/a" and launch_url("about:blank") == "about:blank"


def test_the_policy_opens_the_tasks_own_origin_and_what_its_settings_allow() -> None:
    task = "http://127.0.0.1:8000/shop/"
    default = HostPolicy()
    assert default.refusal("http://127.0.0.1:8000/mail/", task) is None
    assert "local address" in default.refusal("http://127.0.0.1:8001/", task)
    assert "local address" in default.refusal("http://localhost:8000/", task)  # another name: another host
    assert default.refusal("https://example.com/", task) is None
    assert "names no host" in default.refusal("http:///x", None)
    listed = HostPolicy(allowed=("example.org", "10.0.0.5:8080"), denied=("ads.example.org",))
    assert listed.refusal("https://www.example.org/", None) is None
    assert listed.refusal("http://10.0.0.5:8080/", None) is None
    assert "allow-list" in listed.refusal("http://10.0.0.5:8081/", None)
    assert "allow-list" in listed.refusal("https://example.com/", None)
    assert "deny-list" in listed.refusal("https://ads.example.org/", None)
    assert listed.refusal("http://127.0.0.1:8000/cart", task) is None  # the task's own origin always opens
    with pytest.raises(HostPolicyError, match="'example.org/x'"):
        HostPolicy(denied=("example.org/x",))
