"""About dialog: the versions an admin quotes in a bug report."""

from __future__ import annotations

import platform
from importlib import metadata

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from stripewise import __version__
from stripewise.services.system_info import SystemReport


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def version_rows(
    report: SystemReport | None, database: str, schema: str | None
) -> list[tuple[str, str]]:
    if report is None:
        fio = "checking..."
    elif report.fio.present:
        fio = report.fio.version or f"installed at {report.fio.path}, version unknown"
    else:
        fio = "not installed (the built-in engine is used)"
    return [
        ("Stripewise", __version__),
        ("Qt", qVersion()),
        ("PySide6", pyside_version),
        ("Python", platform.python_version()),
        ("pyqtgraph", _package_version("pyqtgraph")),
        ("SQLAlchemy", _package_version("SQLAlchemy")),
        ("fio", fio),
        ("Platform", f"{QGuiApplication.platformName()}, kernel {platform.release()}"),
        ("History", f"{database} (schema {schema or 'empty'})"),
    ]


class AboutDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Stripewise")
        self.rows = rows
        layout = QVBoxLayout(self)
        header = QLabel()
        header.setPixmap(QIcon.fromTheme("org.stripewise.Stripewise", self.windowIcon()).pixmap(64))
        layout.addWidget(header, alignment=Qt.AlignmentFlag.AlignHCenter)
        title = QLabel(
            "<h2>Stripewise</h2><p>Storage-tuning assistant for Linux: see which disk sits on "
            "which controller, plan arrays, tune, measure and compare.</p>"
            "<p>Press F1 on any page for its page of the manual (Help &gt; Stripewise Help).</p>"
        )
        title.setWordWrap(True)
        title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(title)
        table = "".join(
            f"<tr><td style='padding-right:12px'><b>{name}</b></td><td>{value}</td></tr>"
            for name, value in rows
        )
        versions = QLabel(f"<table>{table}</table>")
        versions.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        versions.setObjectName("versions")
        layout.addWidget(versions)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
