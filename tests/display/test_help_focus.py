"""A window of ours closing on a display without a window manager (`--remote`'s Xvnc, a bare
X server): the keyboard goes back to the window underneath, which no window manager hands it
here (gui/focus_return.py). The manual closed with Esc after F1, and a dialog."""

from __future__ import annotations

import subprocess
import sys

from tests.fixtures.xvfb import XServer

_PROBE = """
import sys
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QLineEdit, QMainWindow
from stripewise.gui.app import create_application
from stripewise.gui.help_window import HelpWindow

app = create_application()
main = QMainWindow()
field = QLineEdit()
main.setCentralWidget(field)
main.resize(600, 400)
main.show()
manual = HelpWindow(main)


def active(window):
    for _ in range(150):
        QTest.qWait(20)
        if app.activeWindow() is window:
            return True
    return False


main.activateWindow()
assert active(main), "the main window never became active"
manual.show_page("benchmark")
assert active(manual), "the manual never became active"
QTest.keyClick(manual.browser, Qt.Key.Key_Escape)
print("main active after Esc:", active(main))
if app.focusWidget() is not None:
    QTest.keyClicks(app.focusWidget(), "sdb")
print("typed:", field.text())
question = QDialog(main)
question.open()
assert active(question), "the dialog never became active"
QTest.keyClick(question, Qt.Key.Key_Escape)
print("main active after the dialog:", active(main))
"""


def test_esc_in_the_manual_gives_the_keyboard_back_to_the_window(xvfb: XServer) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=xvfb.env() | {"QT_QPA_PLATFORM": "xcb"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "main active after Esc: True",
        "typed: sdb",
        "main active after the dialog: True",
    ]
