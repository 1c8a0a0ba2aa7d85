"""Which hosts a model's `Launch(url)` may open: a URL a model writes is data, not permission to reach a host.

Local hosts — loopback, private, link-local and unspecified addresses (IP literals in every form Chromium
accepts, such as `2130706433` or `0x7f.1`) and `localhost` names — reach this machine's services or its
network, so the default policy refuses them; the task's own URL is the exception (a local sandbox server
is reachable at its host and port). Names are not resolved through DNS: a public name that resolves to a
local address is not caught here.
"""

from __future__ import annotations

import ipaddress
import socket
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from uivenus.envs.base import EnvError

#: The task setup key that narrows the allow-list for one episode (a live-web task kept to its own website).
TASK_HOSTS = "allowed_hosts"
#: Ports a URL without one connects to.
DEFAULT_PORTS: Mapping[str, int] = {"http": 80, "https": 443}
#: Names that always mean this machine (besides `*.localhost`, which Chromium resolves to loopback itself).
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                         socket.gethostname().lower()})


class HostPolicyError(ValueError):
    """A host policy entry is not a host (or host:port); the message names it."""


class HostRefusedError(EnvError):
    """A Launch(url) to a host the policy refuses; nothing was opened."""


def launch_url(url: str) -> str:
    """A URL as Launch opens it: 'example.com/x' means https://example.com/x."""
    url = url.strip()
    if "://" not in url and url != "about:blank" and not url.lower().startswith(("javascript:", "data:")):
        return f"https://{url}"
    return url


def canonical_host(host: str) -> str:
    """`host` as Chromium reads it: percent-decoded, IDNA-mapped (full-width digits and dots), lower case, no
    trailing dot, and an IP literal in its standard form."""
    host = unquote(host)
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        host = unicodedata.normalize("NFKC", host)
    host = host.lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    last = host.rsplit(".", 1)[-1]
    if last.isdigit() or last.startswith("0x"):  # WHATWG: a host whose last label is a number is IPv4
        try:
            return socket.inet_ntoa(socket.inet_aton(host))  # also '2130706433', '0x7f.1', octal '0177.0.0.1'
        except OSError:
            pass
    return host


def is_local(host: str) -> bool:
    """Whether `host` (canonical) is this machine or a non-public network: never a public website."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host in LOCAL_NAMES or host.endswith(".localhost")
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global


@dataclass(frozen=True)
class Origin:
    """Where a URL connects: canonical host and port (the scheme's default when the URL has none)."""

    host: str
    port: int | None

    @classmethod
    def of(cls, url: str) -> Origin | None:
        """The origin of an absolute URL; None when it names no host or a malformed port."""
        parts = urlsplit(url.replace("\\", "/"))  # Chromium reads a backslash as '/' here: 'http://a\@b' is host a
        try:
            port = parts.port
        except ValueError:
            return None
        if not parts.hostname:
            return None
        return cls(canonical_host(parts.hostname), port or DEFAULT_PORTS.get(parts.scheme.lower()))

    @classmethod
    def entry(cls, text: str) -> Origin:
        """A policy entry: 'example.com' (any port) or 'host:port' / '[::1]:port' (that port only)."""
        origin = cls.of(f"//{text.strip()}")
        if origin is None or "/" in text:
            raise HostPolicyError(f"host policy entry {text!r} must be a host or host:port, like 'example.com' "
                                  "or '127.0.0.1:8000'")
        return origin

    @property
    def local(self) -> bool:
        return is_local(self.host)

    def covers(self, other: Origin) -> bool:
        """This entry names `other`: the same host or a subdomain of it, and the same port if it has one."""
        same_host = other.host == self.host or other.host.endswith(f".{self.host}")
        return same_host and (self.port is None or self.port == other.port)


@dataclass(frozen=True)
class HostPolicy:
    """Which hosts Launch may open besides the task's own URL (its host and port always): a setting of the
    browser env. `denied` wins over everything; `allowed` (None: every public host) is the only way to
    open a local host the task is not on."""

    allowed: tuple[str, ...] | None = None  # hosts (and subdomains), optionally host:port; None: any public host
    denied: tuple[str, ...] = ()  # never opened, whatever else allows them

    def __post_init__(self) -> None:
        for entry in (*(self.allowed or ()), *self.denied):
            Origin.entry(entry)

    def narrowed(self, hosts: tuple[str, ...]) -> HostPolicy:
        """This policy with `hosts` as the only allowed ones (a task's `setup["allowed_hosts"]`); the deny-list
        stays."""
        return HostPolicy(allowed=hosts, denied=self.denied)

    def refusal(self, url: str, task_url: str | None) -> str | None:
        """Why a Launch to absolute `url` is refused on a task at `task_url`, or None when it may open."""
        origin = Origin.of(url)
        if origin is None:
            return f"{url[:80]!r} names no host (or a malformed port)"
        if any(Origin.entry(e).covers(origin) for e in self.denied):
            return f"{origin.host} is on the deny-list (HostPolicy.denied)"
        if task_url is not None and origin == Origin.of(task_url):
            return None
        if self.allowed is not None:
            if any(Origin.entry(e).covers(origin) for e in self.allowed):
                return None
            return f"{origin.host} is not on the allow-list (HostPolicy.allowed) and the task is not there"
        if origin.local:
            return (f"{origin.host} is a local address (loopback, private, link-local or localhost) and the task "
                    "is not on it")
        return None

    def check(self, url: str, task_url: str | None) -> None:
        """Raise `HostRefusedError` (saying how to allow it) when a Launch to `url` is refused."""
        why = self.refusal(url, task_url)
        if why is not None:
            raise HostRefusedError(f"Launch refused, nothing was opened: {why}; to allow it, add the host to "
                                   "BrowserConfig.hosts.allowed")
