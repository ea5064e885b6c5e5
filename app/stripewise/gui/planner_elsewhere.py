"""The planner's word on plans of another machine: a recording, a snapshot or a dump of another
server is planned for that server; nothing is built here from it unless its disks are found
here by identity (issue 29.1)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFrame, QLabel, QWidget

from stripewise.model.plan import Plan
from stripewise.model.topology import Inventory

TITLE_CHARS = 20  # a Plan button at 1024 px keeps room for the others


def map_title(inventory: Inventory, shown: str) -> str:
    """What to call the map on show: its host name, else its file's name without the
    extension, shortened."""
    title = inventory.host.hostname or Path(inventory.host.source_file or shown).stem
    return title if len(title) <= TITLE_CHARS else f"{title[: TITLE_CHARS - 1]}…"


def host_words(key: str | None) -> str:
    """A plan's host key for people: "backup-07", "the file x.umockdev", "machine 3d1219c7…"."""
    if key is None:
        return "no machine recorded"
    kind, _, value = key.partition(":")
    if kind == "host":
        return value
    if kind == "file":
        return f"the file {value}"
    return f"machine {value[:8]}…" if len(value) > 8 else f"machine {value}"


class ElsewhereNote(QLabel):
    """Shown while the plan's real disks were read on another machine than this one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMargin(6)
        self.setAccessibleName("Plan of another machine")
        self.setVisible(False)

    def show_for(self, plan: Plan, machine: Inventory | None) -> None:
        real = any(not d.hypothetical for d in plan.disks)
        elsewhere = real and machine is not None and plan.host != machine.host.key
        self.setVisible(elsewhere)
        if elsewhere:
            self.setText(
                f"This plan is of another machine ({host_words(plan.host)}), not this one: its "
                "commands are for that machine. Create on This Machine looks for its disks "
                "here by WWN, serial or stable name, never by kernel name, and is offered only "
                "when every one is found."
            )
