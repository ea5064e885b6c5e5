"""The real servers these tests start: Xvfb, sshd with X11 forwarding."""

from tests.fixtures.sshd import (
    sshd,  # noqa: F401
    sshd_x11,  # noqa: F401
)
from tests.fixtures.xvfb import xvfb  # noqa: F401
