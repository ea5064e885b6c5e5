"""Where a benchmark host is reached: a running fio server (`HOST:PORT`) or `ssh://[user@]host`.

For an ssh host Stripewise starts `fio --server` bound to the remote loopback and reaches it
through an ssh port forward, so a fio server (which has no authentication) never listens on a
reachable address. Every part is checked here because it ends up in argument lists of ssh and
fio: a host name starting with "-" would be read as an option.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

DEFAULT_FIO_PORT = 8765  # fio's own default for --server and --client
DEFAULT_SSH_PORT = 22
MAX_HOST_TEXT = 255

_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*\.?$"
)
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")

HostKind = Literal["fio", "ssh"]


class HostAddressError(ValueError):
    """A host text that cannot name a benchmark host; the message is one line for the admin."""


@dataclass(frozen=True, order=True)
class HostAddress:
    """One host of a group. `port` is the fio server's port, or for ssh the ssh server's port
    (as in ssh:// URLs); the remote fio server's port is picked when it is started."""

    kind: HostKind
    host: str
    port: int = DEFAULT_FIO_PORT
    user: str | None = None

    def __post_init__(self) -> None:
        """Rows read back from a (shared) history are checked as typed text is: a host there
        must never reach ssh's or fio's arguments unchecked."""
        whole = f"{self.host}:{self.port}"
        if self.kind not in ("fio", "ssh"):
            raise HostAddressError(f"host {whole}: kind {self.kind!r} is not fio or ssh")
        if ":" in self.host:
            _check_ip(self.host, whole, version=6)
        else:
            _check_name(self.host, whole)
        _port(str(self.port), whole, self.port)
        if self.user is not None and not _USER.fullmatch(self.user):
            raise _not_a("a user name", self.user, whole)

    @property
    def label(self) -> str:
        """How the host is written and shown: `HOST:PORT` or `ssh://[user@]host`."""
        if self.kind == "ssh":
            who = f"{self.user}@" if self.user else ""
            port = "" if self.port == DEFAULT_SSH_PORT else f":{self.port}"
            return f"ssh://{who}{_bracketed(self.host)}{port}"
        return f"{_bracketed(self.host)}:{self.port}"

    @property
    def is_loopback(self) -> bool:
        """True for addresses of this machine's loopback (127.0.0.0/8, ::1, localhost)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_host(text: str) -> HostAddress:
    """`HOST[:PORT]`, `[v6]:PORT` or `ssh://[user@]host[:ssh-port]`; HostAddressError if not."""
    raw = text.strip()
    if not raw:
        raise HostAddressError("empty host")
    if not raw.isprintable():  # a newline or escape would end up in messages and arguments
        raise HostAddressError(f"host {raw[:40]!r}: contains control characters")
    if len(raw) > MAX_HOST_TEXT:
        raise HostAddressError(f"host {raw[:40]}...: longer than {MAX_HOST_TEXT} characters")
    if raw.startswith("ssh://"):
        rest = raw[len("ssh://") :]
        user: str | None = None
        if "@" in rest:
            user, rest = rest.rsplit("@", 1)
            if not _USER.fullmatch(user):
                raise _not_a("a user name", user, raw)
        host, port = _host_and_port(rest, raw, DEFAULT_SSH_PORT)
        return HostAddress("ssh", host, port, user)
    if "://" in raw:
        raise HostAddressError(f"host {raw}: only HOST:PORT or ssh://[user@]host are understood")
    host, port = _host_and_port(raw, raw, DEFAULT_FIO_PORT)
    return HostAddress("fio", host, port)


def _host_and_port(text: str, whole: str, default_port: int) -> tuple[str, int]:
    port_text: str | None = None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise HostAddressError(f"host {whole}: '[' without ']'")
        host, after = text[1:end], text[end + 1 :]
        if after:
            if not after.startswith(":"):
                raise HostAddressError(f"host {whole}: expected ':PORT' after ']'")
            port_text = after[1:]
        _check_ip(host, whole, version=6)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif ":" in text:
        host = text  # a bare IPv6 address: no port can follow it unbracketed
        _check_ip(host, whole, version=6)
    else:
        host = text
    if not host:
        raise HostAddressError(f"host {whole}: no host name")
    if ":" not in host:
        _check_name(host, whole)
    return host, _port(port_text, whole, default_port)


def _check_name(host: str, whole: str) -> None:
    try:
        ipaddress.IPv4Address(host)
        return
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(host):
        raise _not_a("a host name or address", host, whole)


def _check_ip(host: str, whole: str, *, version: int) -> None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise HostAddressError(f"host {whole}: {host!r} is not an IPv6 address") from None
    if address.version != version:
        raise HostAddressError(f"host {whole}: {host!r} is not an IPv{version} address")
    if getattr(address, "scope_id", None) is not None:  # "%eth0 -oX" would reach ssh and fio
        raise HostAddressError(f"host {whole}: a scoped IPv6 address (%...) is not supported")


def _port(text: str | None, whole: str, default_port: int) -> int:
    if text is None:
        return default_port
    if not (text.isascii() and text.isdigit()) or len(text) > 5:
        raise HostAddressError(f"host {whole}: port {text!r} is not a number from 1 to 65535")
    port = int(text)
    if not 1 <= port <= 65535:
        raise HostAddressError(f"host {whole}: port {port} is not from 1 to 65535")
    return port


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _not_a(what: str, text: str, whole: str) -> HostAddressError:
    """Why `text` cannot stand in `whole`; one beginning with '-' is said to be an option."""
    why = " (it begins with '-': ssh would take it for an option)" if text.startswith("-") else ""
    return HostAddressError(f"host {whole}: {text!r} is not {what}{why}")
