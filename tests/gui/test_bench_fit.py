"""Issue 29.5: the Benchmark page at 1024x768 after a real 3-pass run of the built-in engine.
The results table is whole (every row, every column), the phase bands' names are whole or
shorter names (never "Sequenti..."), the bar and the text beside it say one progress each by
name, and a size that cannot run is said under its field, not above the plots."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QWidget

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.bench_plot_backdrop import band_names
from stripewise.gui.main_window import MainWindow
from stripewise.gui.plot_stack import PLOTS_MIN_PX
from stripewise.model.bench import Phase
from stripewise.protocol.events import Sample
from tests.gui.conftest import WindowFactory
from tests.gui.test_bench_page import set_up

CONSOLE = QSize(1024, 768)
PHASES = (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ)


def console_page(make_window: WindowFactory, qtbot: Any) -> tuple[MainWindow, BenchPage]:
    window = make_window(view="benchmark")
    window.resize(CONSOLE)
    qtbot.waitUntil(lambda: window.size() == CONSOLE)
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    return window, page


def settle() -> None:
    """Layouts run from posted events: geometry read at once would not see a change."""
    for _ in range(3):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def three_passes(page: BenchPage, tmp_path: Path, qtbot: Any, **seen: Any) -> None:
    """A real run: 64 MiB, four phases, three passes, in a directory of its own."""
    target = tmp_path / "target"
    target.mkdir()
    page.form.add_directory(str(target))
    page.form.engine.setCurrentIndex(page.form.engine.findData("builtin"))
    for phase, box in page.form.phase_boxes.items():
        box.setChecked(phase in PHASES)
    page.form.file_size.setText("64M")
    page.form.repetitions.setValue(3)
    page.form.rate.setValue(10)
    if "on_sample" in seen:
        page.session.sampleArrived.connect(seen["on_sample"])  # after the page's own slot
    with qtbot.waitSignal(page.session.saved, timeout=180_000) as saved:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert saved.args[1] == "complete"
    settle()


def rect_in(widget: QWidget, window: QWidget) -> QRect:
    rect = widget.rect()  # not size(): the form has a field of that name
    return QRect(widget.mapTo(window, rect.topLeft()), rect.size())


def whole(widget: QWidget, window: QWidget) -> bool:
    """Shown, and inside every widget it sits in."""
    if not widget.isVisible():
        return False
    mapped = rect_in(widget, window)
    parent = widget.parentWidget()
    while parent is not None:
        if not rect_in(parent, window).contains(mapped):
            return False
        if parent is window:
            return True
        parent = parent.parentWidget()
    return False


def test_a_three_pass_run_shows_its_whole_table_at_1024x768(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    window, page = console_page(make_window, qtbot)
    three_passes(page, tmp_path, qtbot)
    table = page.results
    assert table.rowCount() == 7  # three groups' headings and four phases
    assert whole(table, window)
    assert not table.verticalScrollBar().isVisible(), "rows scroll: not all are on show"
    assert not table.horizontalScrollBar().isVisible(), "columns scroll: the last one is cut"
    viewport = table.viewport().rect()
    for row in range(table.rowCount()):
        top = table.rowViewportPosition(row)
        assert top >= 0 and top + table.rowHeight(row) <= viewport.height(), f"row {row} cut"
    header = table.horizontalHeader()
    for column in range(table.columnCount()):
        right = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert right <= viewport.width(), f"column {column} cut"
        assert header.sectionSize(column) >= table.sizeHintForColumn(column), column
    assert "of 3 passes" in table.horizontalHeaderItem(2).text()
    assert re.fullmatch(r"[\d,.]+\u2013[\d,.]+", table.cell_text("seq_write", 2))
    assert page.plots.height() >= 200, "the plots keep a readable height"
    for widget in (page.open_button, page.compare_button, page.save_plot_button):
        assert whole(widget, window)


def test_phase_bands_are_named_whole_or_by_a_shorter_name(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    _window, page = console_page(make_window, qtbot)
    three_passes(page, tmp_path, qtbot)
    page.plots.grab()  # a paint lays the names out
    drawn = page.plots.drawn_phase_labels()
    assert len(page.plots.phase_labels) == 12
    names = {name for phase in PHASES for n in (1, 2, 3) for name in band_names(phase, n)}
    assert drawn, "no band is named at all"
    assert [text for text in drawn if text not in names] == [], "a name cut short"
    assert not any("\u2026" in text for text in drawn)
    # the last band has the room to the view's edge: it is named, in some length
    last = set(band_names(Phase.RANDOM_READ, 3))
    assert any(text in last for text in drawn), drawn


def test_the_bar_says_the_runs_progress_and_the_text_the_phases(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    _window, page = console_page(make_window, qtbot)
    shown: list[tuple[bool, str, int, str]] = []

    def look(_sample: Sample) -> None:
        bar = page.progress
        shown.append((bar.isTextVisible(), bar.text(), bar.value(), page.phase_label.text()))

    three_passes(page, tmp_path, qtbot, on_sample=look)
    assert len(shown) > 10
    for visible, bar_text, value, line in shown:
        assert visible and bar_text == f"run {value // 10} %", (bar_text, value)
        # every percentage beside the bar is named the phase's: "pass 1 of 3: phase 53 %"
        assert re.findall(r"(\S+) \d+ %", line) == ["phase"], line
        assert re.search(r"pass [123] of 3: phase", line), line
    assert page.progress.text() == "run 100 %"


def test_a_phases_closing_sample_says_ending_not_an_unknown_end(
    make_window: WindowFactory, qtbot: Any
) -> None:
    """The closing sample of a phase (100 %, nothing left to time: no ETA) turned "phase
    100 %, ends in 0 s" into "ends in unknown"."""
    _window, page = console_page(make_window, qtbot)
    page._phase_text = "Random Seeks (reads), pass 1 of 3"
    rates = (0.0, 0.0, 0.0, 0.0)
    page._on_sample(Sample("r", Phase.RANDOM_READ, 1, 3.68, *rates, 0.99, 0.02, span_s=0.5))
    assert page.phase_label.text().endswith("phase 99 %, ends in 0 s")
    page._on_sample(Sample("r", Phase.RANDOM_READ, 1, 3.70, *rates, 1.0, None, span_s=0.0))
    assert page.phase_label.text() == "Random Seeks (reads), pass 1 of 3: phase 100 %, ending"


def test_a_size_that_cannot_run_is_said_under_its_field(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    window, page = console_page(make_window, qtbot)
    page.form.add_directory(str(tmp_path))
    before = page.phase_label.text()
    page.form.file_size.setText("1GG")
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    settle()
    assert not page.session.busy and page.start_button.isEnabled()
    assert page.phase_label.text() == before, "the line above the plots is the run's"
    said = [
        label for label in page.findChildren(QLabel) if label.isVisible() and "1GG" in label.text()
    ]
    assert len(said) == 1
    error, field = rect_in(said[0], window), rect_in(page.form.file_size, window)
    assert 0 <= error.top() - field.bottom() <= 12, "right under the size field"
    assert error.left() == field.left()
    qtbot.waitUntil(lambda: whole(said[0], window))  # scrolled into view
    assert page.form.file_size.hasFocus() and page.form.file_size.selectedText() == "1GG"
    qtbot.keyClicks(page.form.file_size, "1G")  # put right: the error goes
    assert not said[0].isVisible() and page.form.errors.shown() == {}


def test_at_800x600_a_run_never_scrolls_the_page_sideways_and_its_plots_are_legible(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    """During a run at 800x600 the phase line's whole width ("Random Seeks (reads), pass 1
    of 3: phase 53 %, ends in 2 s") pushed the page sideways: the right column was cut, and
    the buttons under the table with it. It wraps instead. And the plots had 5 px each."""
    window = make_window(view="benchmark")
    window.resize(800, 600)
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    set_up(page, tmp_path, "256M", ("seq_write", "seq_read", "random_read"))
    page.form.direct.setChecked(False)
    with qtbot.waitSignal(page.session.sampleArrived, timeout=30_000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    try:
        qtbot.waitUntil(lambda: "ends in" in page.phase_label.text(), timeout=30_000)
        settle()
        area = window.findChild(QScrollArea, "pageScroll")
        assert area is not None and not area.horizontalScrollBar().isVisible()
        for widget in (page.compare_button, page.save_plot_button, page.phase_label):
            assert whole(widget, window), widget
        # the plots' data areas: 5 px each beside the navigation's names, their legends in
        # six rows; the icons alone leave the plots 30 px and their axes' ticks
        heights = [plot.getViewBox().sceneBoundingRect().height() for plot in page.plots._plots()]
        assert min(heights) >= 24, heights
    finally:
        page.cancel()
        qtbot.waitUntil(lambda: not page.session.busy, timeout=30_000)


def test_after_a_run_that_logged_latency_the_table_keeps_its_rows_at_1280x900(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    """At 2 Hz the latency map comes under the plots: asking for pyqtgraph's large hint, the
    plots took the table's room (its header and half a row, "Random writes" scrolled away)
    and the map the plots' (about 40 px for all three). The table keeps every row, the plots
    their least height, and the map has the rest."""
    window = make_window(view="benchmark")
    window.resize(1280, 900)
    qtbot.waitUntil(lambda: window.size() == QSize(1280, 900))
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    target = tmp_path / "target"
    target.mkdir()
    page.form.add_directory(str(target))
    page.form.engine.setCurrentIndex(page.form.engine.findData("builtin"))
    for phase, box in page.form.phase_boxes.items():
        box.setChecked(phase in (Phase.SEQ_WRITE, Phase.RANDOM_WRITE))
    page.form.file_size.setText("64M")
    page.form.rate.setValue(2)
    with qtbot.waitSignal(page.session.saved, timeout=180_000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    settle()
    assert page.plots.latency_map.isVisible()
    table = page.results
    assert table.rowCount() == 4  # two headings, two phases
    assert whole(table, window)
    for row in range(table.rowCount()):
        top = table.rowViewportPosition(row)
        assert top >= 0 and top + table.rowHeight(row) <= table.viewport().height(), row
    assert page.plots._view.height() >= PLOTS_MIN_PX
    assert whole(page.plots.latency_map, window)
    area = window.findChild(QScrollArea, "pageScroll")
    assert area is not None and not area.verticalScrollBar().isVisible()
