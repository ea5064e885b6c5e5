"""Fixtures of the host tests: a real sshd on loopback and network namespaces."""

from __future__ import annotations

from tests.fixtures.netns import (  # noqa: F401  (namespaces with addresses of their own)
    netns_fio_servers,
    netns_hosts,
)
from tests.fixtures.sshd import sshd  # noqa: F401  (a real sshd on loopback)
