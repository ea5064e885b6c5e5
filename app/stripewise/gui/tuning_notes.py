"""What the Tuning page says beside its preview, apart from the summary line: the note of
what the helper put back of an apply killed half-way (said once, kept in sight), and the
filesystem geometry of the selected arrays with the commands that make or fix it.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QLabel, QWidget

from stripewise.model.tunable_values import bare, shown
from stripewise.protocol.tuning_replies import PutBack, restored_summary
from stripewise.services.tuning import GeometryReport


class RestoredNote(QLabel):
    """What the helper put back of interrupted applies, as it started or before a verb; hidden
    until there is something to say."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMargin(6)
        self.setAccessibleName("Interrupted apply put back")
        self.setVisible(False)
        self.told: list[PutBack] = []  # what the note says

    def tell(self, items: tuple[PutBack, ...]) -> str | None:
        """Add what was not said yet; its last line for the status bar, or None if nothing new."""
        new = [item for item in items if item not in self.told]
        if not new:
            return None
        self.told += new
        lines = restored_summary(self.told, shown, bare)  # with units, as `tune show` says
        self.setText("\n".join(line[0].upper() + line[1:] + "." for line in lines))
        self.setVisible(True)
        return lines[-1]


def geometry_text(reports: list[GeometryReport]) -> str:
    """Each array's geometry, its problems, and the mkfs (and, when it is off, fix) command."""
    lines: list[str] = []
    for report in reports:
        lines.append(f"{report.array}: {report.note}")
        lines.extend(f"  ! {problem}" for problem in report.problems)
        if report.advice is not None:
            lines.append(f"  {report.advice.explanation()}")
            lines.append("  make:  " + " ".join(report.advice.mkfs_argv(report.device)))
            fix = report.advice.fix_argv(report.device)
            if fix and report.problems:
                lines.append("  fix:   " + " ".join(fix))
    return "\n".join(lines)
