"""Where the helper keeps its state, and what the tuning verbs need of its session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stripewise.helper.tuning.interrupted import Restorations

DEFAULT_STATE_DIR = "/var/lib/stripewise"  # the tuning journal, records of created files


class HelperState(Protocol):
    """The session as the tuning verbs see it: where they work and whether they may write."""

    @property
    def root(self) -> str: ...  # prefixes sysfs/procfs/etc paths ("/" except in tests)

    @property
    def state_dir(self) -> str: ...  # the tuning journal's directory

    @property
    def privileged(self) -> bool: ...

    @property
    def restorations(self) -> Restorations: ...  # interrupted applies put back by this helper
