"""What the machine offers (fio, bonnie++, privileges), probed once in the background."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from stripewise import environment
from stripewise.services.tasks import run_in_background


@dataclass(frozen=True)
class SystemReport:
    fio: environment.Tool
    bonnie: environment.Tool
    privileges: environment.Privileges


def probe_system() -> SystemReport:
    return SystemReport(
        fio=environment.probe_fio(),
        bonnie=environment.probe_bonnie(),
        privileges=environment.probe_privileges(),
    )


class SystemInfoService(QObject):
    """Probes external tools off the GUI thread: `fio --version` and `sudo -n` can be slow."""

    probed = Signal(object)  # SystemReport
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.report: SystemReport | None = None

    def probe(self) -> None:
        run_in_background(probe_system, self._on_report, self._on_failure)

    def _on_report(self, report: SystemReport) -> None:
        self.report = report
        self.probed.emit(report)

    def _on_failure(self, exc: Exception) -> None:
        self.failed.emit(f"system probe failed: {exc}")
