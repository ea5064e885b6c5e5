"""Host texts end up in ssh's and fio's argument lists: what is refused, and what a row read
back from a shared history must still pass."""

from __future__ import annotations

import pytest

from stripewise.model.host_address import HostAddress, HostAddressError, parse_host


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("127.0.0.1:8766", "127.0.0.1:8766"),
        ("db1", "db1:8765"),
        ("[::1]:9000", "[::1]:9000"),
        ("ssh://root@db1", "ssh://root@db1"),
        ("ssh://db1.example.com:2222", "ssh://db1.example.com:2222"),
    ],
)
def test_hosts_as_admins_write_them(text: str, label: str) -> None:
    assert parse_host(text).label == label


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("-oProxyCommand=x:1", "is not a host name"),
        ("ssh://-oProxyCommand=x", "is not a host name"),
        ("host\n:8765", "control characters"),  # `$` in a regex matches before a newline
        ("ssh://root\n@host", "control characters"),
        ("ssh://u@[fe80::1%eth0 -oProxyCommand=x]", "scoped IPv6"),
        ("[fe80::1%x,y]:8765", "scoped IPv6"),
        ("127.0.0.1:²", "port"),  # a digit to str.isdigit, not to int()
        ("127.0.0.1:٢٢", "port"),
        ("h:70000", "port 70000"),
        ("ssh://bad user@h", "not a user name"),
        ("http://x", "only HOST:PORT"),
    ],
)
def test_what_could_reach_an_argument_list_is_refused_in_one_line(text: str, names: str) -> None:
    with pytest.raises(HostAddressError, match=names) as refused:
        parse_host(text)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    "parts",
    [
        ("fio", "-oProxyCommand=x", 1),
        ("ssh", "db1", 22, "ro ot"),
        ("tcp", "db1", 1),
        ("fio", "db1", 0),
    ],
)
def test_a_row_from_a_shared_history_is_checked_as_typed_text_is(parts: tuple) -> None:
    with pytest.raises(HostAddressError):
        HostAddress(*parts)
