"""The Qt library actually loaded and the PySide6 around it, read without a QApplication (for
`stripewise --version`: no display needed)."""

from __future__ import annotations

import PySide6
from PySide6.QtCore import qVersion


def qt_versions() -> tuple[str, str]:
    """(Qt, PySide6): qVersion() is the library loaded at run time, which may differ from the
    one PySide6 was built against."""
    return qVersion(), PySide6.__version__
