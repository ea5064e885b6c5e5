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
manual.show_page("history")  # open beside it: the closed dialog's owner wins, not the newest
throwaway = QDialog(main)
throwaway.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # gone before the keyboard moves
throwaway.open()
assert active(throwaway), "the second dialog never became active"
throwaway.close()
print("main active after a dialog deleted on close:", active(main))
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
        "main active after a dialog deleted on close: True",
    ]


# ours: a main window and a dialog that closes itself when told (as the scaling dialog does
# when its measurement ends), while another program has the keyboard
_OURS = """
import sys
from PySide6.QtCore import QSocketNotifier
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QMainWindow
from stripewise.gui.app import create_application

app = create_application()
main = QMainWindow()
main.show()
dialog = QDialog(main)
dialog.open()
dialog.activateWindow()
for _ in range(150):
    QTest.qWait(20)
    if app.activeWindow() is dialog:
        break
print("ready", flush=True)
app.focusWindowChanged.connect(lambda window: window or print("lost", flush=True))
told = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
told.activated.connect(lambda: (sys.stdin.readline(), dialog.close(), QTest.qWait(500), app.quit()))
app.exec()
"""
_THEIRS = """
import sys
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

app = QApplication(sys.argv[:1])
window = QWidget()
window.show()
window.activateWindow()
for _ in range(150):
    QTest.qWait(20)
    if window.isActiveWindow():
        break
print("active", window.isActiveWindow(), flush=True)
sys.stdin.readline()
QTest.qWait(300)
print("still active", window.isActiveWindow(), flush=True)
"""


def test_a_window_of_ours_closing_takes_nothing_from_another_program(xvfb: XServer) -> None:
    env = xvfb.env() | {"QT_QPA_PLATFORM": "xcb"}

    def start(script: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", script], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    ours = start(_OURS)
    theirs = None
    try:
        assert ours.stdout is not None and ours.stdin is not None
        assert ours.stdout.readline().strip() == "ready"
        theirs = start(_THEIRS)
        assert theirs.stdout is not None and theirs.stdin is not None
        assert theirs.stdout.readline().strip() == "active True"
        assert ours.stdout.readline().strip() == "lost"  # ours knows the keyboard went
        ours.stdin.write("close\n")
        ours.stdin.flush()
        assert ours.wait(timeout=60) == 0
        theirs.stdin.write("check\n")
        theirs.stdin.flush()
        assert theirs.stdout.readline().strip() == "still active True"
    finally:
        for process in (ours, theirs):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
