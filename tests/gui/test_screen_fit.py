"""Windows opened at a size of their own fit the screen they open on: at 800x600 the Compare
window's buttons were below the screen's edge."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QPushButton, QTableWidget, QVBoxLayout, QWidget

from stripewise.gui import screen_fit
from stripewise.gui.compare_cells import fit_width
from stripewise.gui.screen_fit import HEIGHT_SHARE, WIDTH_SHARE, resize_within_screen
from tests.gui.conftest import WindowFactory
from tests.gui.test_compare_view import open_comparison


def within_screen(window: QWidget) -> bool:
    room = window.screen().availableGeometry()
    return (
        window.width() <= room.width() * WIDTH_SHARE
        and window.height() <= room.height() * HEIGHT_SHARE
    )


def test_a_window_wider_and_taller_than_the_screen_is_made_to_fit(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    room = window.screen().availableGeometry()
    resize_within_screen(window, QSize(room.width() + 300, room.height() + 200))
    assert within_screen(window)
    assert window.width() > room.width() * 0.9 and window.height() > room.height() * 0.85


def test_a_window_that_fits_keeps_its_size_and_none_goes_below_its_layout(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    resize_within_screen(window, QSize(300, 200))
    assert window.size() == QSize(300, 200)
    button = QPushButton("a button that wants its room")
    button.setMinimumSize(400, 300)
    QVBoxLayout(window).addWidget(button)
    resize_within_screen(window, QSize(100, 100))
    assert window.width() >= 400 and window.height() >= 300


def test_the_compare_window_opens_within_the_screen(
    make_window: WindowFactory,
    seeded_db_url: str,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tests' screen (1280x1024) holds the Compare window's 1000x700: the share of it a
    window may take is made smaller here, as an 800x600 console's would be."""
    monkeypatch.setattr(screen_fit, "WIDTH_SHARE", 0.5)
    monkeypatch.setattr(screen_fit, "HEIGHT_SHARE", 0.5)
    window = make_window(url=seeded_db_url, view="history")
    compare = open_comparison(window, qtbot, [1, 2, 3])
    try:
        # its height is the one it opens at (it widens itself to its columns, within the
        # screen, once the runs are read: compare_cells.fit_width)
        room = compare.screen().availableGeometry()
        least = compare.minimumSizeHint().height()
        assert compare.height() <= max(room.height() // 2, least) < 700, compare.size()
    finally:
        compare.close()


def test_a_window_widened_to_its_table_is_moved_back_onto_the_screen(qtbot: Any) -> None:
    """An 8-run comparison opened in the middle of the screen was widened where it stood: its
    Export, HTML Report, Save Plot and Close buttons went past the screen's right edge."""
    window = QWidget()
    table = QTableWidget(1, 8)
    QVBoxLayout(window).addWidget(table)
    qtbot.addWidget(window)
    room = window.screen().availableGeometry()
    window.resize(1000, 500)
    window.show()
    qtbot.waitExposed(window)
    window.move(room.center().x() - 300, room.top() + 100)
    for column in range(8):
        table.setColumnWidth(column, 250)  # 2000 px of columns: wider than the screen
    fit_width(window, table)
    assert window.width() == int(room.width() * WIDTH_SHARE)
    assert room.contains(window.frameGeometry()), (window.frameGeometry(), room)
    assert window.y() == room.top() + 100, "only moved sideways"
