"""Host groups for the GUI: listed off the GUI thread, written on the history's serial writer,
and checked (reachable, fio version, protocol match) one background task per host.

The groups live in the history database (`history.host_groups`); a check opens a connection
to the host, which may hang for its whole timeout, so every check runs in the thread pool.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Signal

from stripewise.model.host_address import HostAddress
from stripewise.model.host_group import HostGroup
from stripewise.services.history import HistoryService
from stripewise.services.tasks import run_in_background

CHECK_TIMEOUT_S = 5.0  # per host; an unreachable host costs this much, in the background


class HostGroupsService(QObject):
    """The groups as the database holds them; `groupsLoaded` after every change."""

    groupsLoaded = Signal(list)  # list[HostGroup], by name
    hostChecked = Signal(object)  # HostCheck (hosts.checks): one per host asked about
    failed = Signal(str)  # a read or write that did not happen, in one line

    def __init__(self, history: HistoryService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._history = history
        self.groups: list[HostGroup] = []
        # listings are numbered: one that was overtaken by a write or a later listing is
        # dropped, so a slow listing never shows groups as they were before an edit
        self._generation = 0

    def load(self) -> None:
        from stripewise.history import host_groups

        db = self._history.database
        self._generation += 1
        number = self._generation

        def listed(groups: list[HostGroup]) -> None:
            if number == self._generation:
                self.groups = list(groups)
                self.groupsLoaded.emit(self.groups)

        run_in_background(
            lambda: sorted(host_groups.list_groups(db), key=lambda g: g.name),
            listed,
            self._failed,
        )

    def save(self, group: HostGroup, on_saved: Callable[[], None] | None = None) -> None:
        """Create or replace `group` (its hosts in the order given), then list again."""
        from stripewise.history import host_groups

        db = self._history.database
        self._write(lambda: host_groups.save_group(db, group), on_saved)

    def remove(self, name: str, on_removed: Callable[[], None] | None = None) -> None:
        from stripewise.history import host_groups

        db = self._history.database
        self._write(lambda: host_groups.remove_group(db, name), on_removed)

    def _write(self, work: Callable[[], Any], then: Callable[[], None] | None) -> None:
        self._generation += 1  # a listing under way predates this write

        def done(_result: object) -> None:
            if then is not None:
                then()
            self.load()

        self._history.writer.submit(work, done, self._failed)

    def check(self, hosts: Sequence[HostAddress], timeout_s: float = CHECK_TIMEOUT_S) -> None:
        """One background check per host; each answer arrives as `hostChecked`."""
        from stripewise.hosts.checks import check_host

        for address in hosts:
            run_in_background(
                lambda address=address: check_host(address, timeout_s=timeout_s),  # type: ignore[misc]
                self.hostChecked.emit,
                lambda exc, address=address: self.hostChecked.emit(  # type: ignore[misc]
                    _failed_check(address, exc)
                ),
            )

    def _failed(self, exc: Exception) -> None:
        self.failed.emit(str(exc) or type(exc).__name__)


def _failed_check(address: HostAddress, exc: Exception) -> object:
    """A check that raised instead of answering: shown as unreachable, with its reason."""
    from stripewise.hosts.checks import HostCheck

    return HostCheck(address, False, None, False, str(exc) or type(exc).__name__)
