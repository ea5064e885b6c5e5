from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QSize, Qt, QThreadPool
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QCheckBox, QStyle, QStyleOptionButton

from stripewise.gui import VIEW_NAMES
from stripewise.gui.main_window import MainWindow
from stripewise.gui.theme import ThemeController, is_dark


def test_every_view_has_a_page_and_a_navigation_entry(main_window: MainWindow) -> None:
    assert main_window.nav.count() == len(VIEW_NAMES) == main_window.pages.count()
    for name in VIEW_NAMES:
        main_window.show_view(name)
        assert main_window.current_view == name
        assert main_window.pages.currentWidget() is main_window.page_widgets[name]
        assert main_window.view_actions[name].isChecked()


def test_ctrl_number_shortcuts_switch_views(qtbot, main_window: MainWindow) -> None:
    main_window.activateWindow()
    for number, name in reversed(list(enumerate(VIEW_NAMES, start=1))):
        qtbot.keyClick(
            main_window, Qt.Key(Qt.Key.Key_0 + number), Qt.KeyboardModifier.ControlModifier
        )
        assert main_window.current_view == name


def test_arrow_keys_in_navigation_change_the_page(qtbot, main_window: MainWindow) -> None:
    main_window.show_view("hardware")
    main_window.nav.setFocus()
    qtbot.keyClick(main_window.nav, Qt.Key.Key_Down)
    assert main_window.current_view == "planner"
    qtbot.keyClick(main_window.nav, Qt.Key.Key_End)
    assert main_window.current_view == "history"


def test_window_fits_a_1024x768_console(main_window: MainWindow) -> None:
    assert main_window.minimumSize().width() <= 1024
    assert main_window.minimumSize().height() <= 768 - 40  # room for a panel
    hint = main_window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 728
    main_window.resize(QSize(1024, 700))
    QApplication.processEvents()
    assert main_window.size() == QSize(1024, 700)
    nav = main_window.nav
    last = nav.visualItemRect(nav.item(nav.count() - 1))
    assert nav.viewport().rect().contains(last), "navigation entries clipped at 1024x768"


def test_an_800x600_console_shows_the_pages_icons_alone_and_gives_the_page_their_room(
    qtbot, main_window: MainWindow
) -> None:
    """Below 1000 px the navigation's names go (each stays its item's text and tooltip) and the
    page takes the width they had; a wider window shows them again."""
    nav, page_area = main_window.nav, main_window.splitter.widget(1)
    main_window.show()
    for width, height in ((800, 600), (1180, 780), (800, 600), (1024, 768)):
        main_window.resize(QSize(width, height))
        qtbot.waitUntil(lambda: main_window.width() == width)  # noqa: B023
        QApplication.processEvents()
        compact = width < 1000
        assert nav.compact == compact
        texts = [nav.item(row).text() for row in range(nav.count())]
        assert texts == [name.capitalize() for name in VIEW_NAMES]
        tooltips = [nav.item(row).toolTip() for row in range(nav.count())]
        assert tooltips == (texts if compact else [""] * len(texts))
        if compact:
            assert nav.width() <= 50 and page_area.width() >= width - 60, nav.width()
        else:
            assert nav.width() >= 150
        last = nav.visualItemRect(nav.item(nav.count() - 1))
        assert nav.viewport().rect().contains(last), f"an entry clipped at {width}x{height}"


def test_window_state_and_view_are_remembered(make_window, settings_path: Path) -> None:
    first = make_window()
    first.resize(QSize(1000, 700))
    first.show_view("tuning")
    first.close()
    assert settings_path.exists()
    second = make_window()
    assert second.current_view == "tuning"
    assert second.size() == QSize(1000, 700)


def test_requested_view_wins_over_remembered_one(make_window) -> None:
    first = make_window()
    first.show_view("tuning")
    first.close()
    assert make_window(view="history").current_view == "history"


def test_status_bar_reports_privileges_and_fio(main_window: MainWindow) -> None:
    report = main_window.system.report
    assert report is not None
    assert main_window.privilege_label.text() == f"Privileges: {report.privileges.mode.value}"
    if report.fio.present:
        assert report.fio.version and report.fio.version in main_window.fio_label.text()
    else:
        assert main_window.fio_label.text() == "fio: not installed"
    assert main_window.database_label.text() == "History: 0 runs"


def test_about_dialog_lists_versions(qtbot, main_window: MainWindow) -> None:
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    dialog = main_window.about_dialog()
    qtbot.addWidget(dialog)
    rows = dict(dialog.rows)
    assert rows["Qt"] == qVersion()
    assert rows["PySide6"] == pyside_version
    assert rows["Stripewise"]
    fio = main_window.system.report.fio
    assert rows["fio"] == (
        fio.version if fio.present else "not installed (the built-in engine is used)"
    )
    assert "history.db" in rows["History"]


def test_history_page_lists_recorded_runs(make_window, seeded_db_url: str) -> None:
    window = make_window(url=seeded_db_url, view="history")
    page = window.page_widgets["history"]
    assert page.model.rowCount() == 3
    assert page.stack.currentWidget() is page.split
    # newest first
    assert page.model.index(0, 0).data() == "3"
    assert window.database_label.text() == "History: 3 runs"


def test_selecting_a_run_shows_its_results(make_window, seeded_db_url: str, qtbot) -> None:
    window = make_window(url=seeded_db_url, view="history")
    page = window.page_widgets["history"]
    page.show_run(2)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    assert page.shown_run.summary.id == 2
    assert "Run 2" in page.detail_title.text()
    assert page.detail_results.phases_shown() == ["seq_read"]
    assert page.detail_results.cell_text("seq_read", 1) == "212"  # seeded 210 + run number
    assert page.detail_results.cell_text("seq_read", 2) == "200\u2013230"
    assert "of 3 passes" in page.detail_results.horizontalHeaderItem(2).text()


def test_empty_history_says_so(main_window: MainWindow) -> None:
    page = main_window.page_widgets["history"]
    assert page.stack.currentWidget() is page.empty


@pytest.mark.parametrize("preference, dark", [("dark", True), ("light", False)])
def test_forced_colour_scheme(qapp, preference: str, dark: bool) -> None:
    original = qapp.palette()
    controller = ThemeController(qapp, preference)
    try:
        assert is_dark(qapp.palette()) is dark
    finally:
        controller.detach()
        qapp.setPalette(original)


def test_check_boxes_stand_out_in_the_dark_palette(qapp, qtbot) -> None:
    """Fusion edges a check box a shade darker than the window: on the dark palette, the
    base's own colour. The indicator's edge must differ from the list behind it."""
    original = qapp.palette()
    controller = ThemeController(qapp, "dark")
    try:
        box = QCheckBox()
        box.setAutoFillBackground(True)
        box.setBackgroundRole(QPalette.ColorRole.Base)  # as in the Tuning page's device list
        qtbot.addWidget(box)
        box.resize(40, 30)
        option = QStyleOptionButton()
        box.initStyleOption(option)
        square = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
        image = box.grab().toImage()
        base = qapp.palette().color(QPalette.ColorRole.Base)
        left_edge = [
            QColor(image.pixel(square.left(), y))
            for y in range(square.top() + 3, square.bottom() - 2)
        ]
        brightest = max(c.lightness() for c in left_edge)
        assert brightest - base.lightness() > 60, (brightest, base.lightness())
    finally:
        controller.detach()
        qapp.setPalette(original)


def test_system_scheme_changes_are_followed_unless_forced(qapp) -> None:
    """The desktop switching light/dark arrives as QStyleHints.colorSchemeChanged."""
    original = qapp.palette()
    desktop = {"scheme": Qt.ColorScheme.Light}
    hints = qapp.styleHints()
    try:
        follows = ThemeController(qapp, "system", lambda: desktop["scheme"])
        assert not is_dark(qapp.palette())
        desktop["scheme"] = Qt.ColorScheme.Dark
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        assert is_dark(qapp.palette())
        follows.preference = "light"
        follows.apply()
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        assert not is_dark(qapp.palette()), "a forced scheme must ignore the desktop"
    finally:
        follows.detach()
        qapp.setPalette(original)


def test_history_filters_runs_by_tuning_in_force(make_window, db_url: str, qtbot) -> None:
    from tests.seed import record_run

    for read_ahead in (128, 4096, 4096):
        context = {"disks": [{"name": "sdb", "tuning": {"read_ahead_kb": read_ahead}}]}
        record_run(db_url, f"ra {read_ahead}", context)
    window = make_window(view="history")
    page = window.page_widgets["history"]
    assert page.model.rowCount() == 3
    page.filter.setText("read_ahead_kb=4096")
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=5_000)
    assert "2 of 3 runs match" in page.caption.text()
    page.filter.setText("")
    qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=5_000)


def test_one_mib_toggle_for_the_benchmark_and_history_pages(main_window: MainWindow) -> None:
    history = main_window.page_widgets["history"]
    history.mib_toggle.setChecked(True)  # type: ignore[attr-defined]
    main_window.show_view("benchmark")  # built now, lazily: it starts in step
    bench = main_window.page_widgets["benchmark"]
    assert bench.mib_toggle.isChecked()  # type: ignore[attr-defined]
    bench.mib_toggle.setChecked(False)  # type: ignore[attr-defined]
    assert not history.mib_toggle.isChecked()  # type: ignore[attr-defined]
    assert not history.model._mib  # type: ignore[attr-defined]
    history.mib_toggle.setChecked(True)  # type: ignore[attr-defined]
    assert bench.mib_toggle.isChecked()  # type: ignore[attr-defined]


def test_the_frame_shows_every_page_and_the_view_asked_before_any_service(
    qapp, tmp_path: Path
) -> None:
    """What the first frame draws, before the history opens (gui/app.py attaches it after)."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, initial_view="tuning")
    try:
        names = [window.nav.item(row).text() for row in range(window.nav.count())]
        assert names == [name.capitalize() for name in VIEW_NAMES]
        assert window.current_view == "tuning" and window.view_actions["tuning"].isChecked()
        assert window.database_label.text() == "History: opening..."
        assert window.privilege_label.text() == "Privileges: checking..."
        assert window.fio_label.text() == "fio: checking..."
        assert not window.attached and not window.built
        window.show_view("history")  # before the services: its page waits for them
        assert window.current_view == "history" and not window.built
    finally:
        window.close()
        window.deleteLater()


def test_pages_are_made_when_the_services_come_and_when_first_shown(
    qtbot, seeded_db_url: str, tmp_path: Path
) -> None:
    """As gui/app.py starts: the page on show with the services, the other plain pages before
    the loading starts but the History page, made once the runs are listed and showing them,
    the Benchmark and Experiment pages when first shown; a menu entry chosen before the
    services runs once they are there."""
    from stripewise.gui.main_window import EARLY_VIEWS, WindowServices
    from stripewise.services.hardware import HardwareService
    from stripewise.services.helper_client import HelperClient
    from stripewise.services.history import HistoryService
    from stripewise.services.system_info import SystemInfoService

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, initial_view="planner")
    window.show()
    qtbot.waitExposed(window)
    window.refresh_action.trigger()  # F5 before the history is open: kept for it
    history = HistoryService.open(seeded_db_url)
    listings: list[object] = []
    history.runsLoaded.connect(listings.append)
    helper = HelperClient(options=["--state-dir", str(tmp_path / "helper-state")])
    try:
        services = WindowServices(
            history, SystemInfoService(), HardwareService(history), helper=helper
        )
        window.attach(services)
        assert window.built == {"planner"}
        assert window.pages.currentWidget() is window.page_widgets["planner"]
        assert window.database_label.text() == f"History: {history.display_url}"
        window.build_pages(EARLY_VIEWS)
        assert window.built == {"hardware", "planner", "tuning"}
        with qtbot.waitSignal(window.loaded, timeout=20_000):
            window.start_loading()
        qtbot.waitUntil(lambda: len(listings) >= 2, timeout=5_000)  # F5's listing and the start's
        assert window.database_label.text() == "History: 3 runs"
        window.build_pages()  # the History page, after its runs were listed
        assert window.built == {"hardware", "planner", "tuning", "history"}
        page = window.page_widgets["history"]
        assert page.model.rowCount() == 3  # type: ignore[attr-defined]
        assert page.stack.currentWidget() is page.split  # type: ignore[attr-defined]
        window.show_view("benchmark")
        assert "benchmark" in window.built and "experiment" not in window.built
        assert window.pages.currentWidget() is window.page_widgets["benchmark"]
    finally:
        window.close()
        window.deleteLater()
        assert QThreadPool.globalInstance().waitForDone(10_000)
        history.close()
