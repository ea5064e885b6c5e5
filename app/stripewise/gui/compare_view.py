"""Two to eight runs side by side: figures against a baseline, throughput over time per phase,
what differed around the runs, and a figure against the one parameter that changed.

A change is coloured only when Welch's t over the runs' passes holds it at 95 % after Holm's
correction (`model.verdict`); noise is shown as noise, never as a win, and with too few passes
the window says it can't tell and offers to run the benchmark again with enough.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui.compare_cells import (
    figure_name,
    fill_results,
    fit_width,
    legend_text,
    shown_unit,
)
from stripewise.gui.compare_plots import (
    draw_latency,
    draw_series,
    draw_sweep,
    fill_sweep_table,
    run_colour,
)
from stripewise.gui.help_dialogs import SAVE_COMPARISON
from stripewise.gui.latency_map import LatencyAxis
from stripewise.gui.plot_export import ask_path, save_widget, without_export
from stripewise.gui.screen_fit import resize_within_screen
from stripewise.gui.tables import Table
from stripewise.model.bench import BenchSpec
from stripewise.model.compare import Comparison, compare_runs, phase_order, short_of_passes
from stripewise.model.phase_series import series_note
from stripewise.model.setting_labels import setting_label, setting_text
from stripewise.model.verdict import MIN_PASSES
from stripewise.model.wording import count_noun
from stripewise.services.history import CompareSeries, HistoryService

# a run's column header in What differs: "#12 fio on /srv/raid (1 M…", the rest in its tooltip
_MAX_HEADER_PX = 180


class CompareWindow(QDialog):
    """Not modal: several comparisons can stay open beside the History page."""

    loaded = Signal()
    saved = Signal(str)  # the file written, or why it could not be
    rerunRequested = Signal(object, int)  # a run's BenchSpec, the passes to run it with

    def __init__(
        self,
        history: HistoryService,
        run_ids: list[int],
        parent: QWidget | None = None,
        baseline_id: int | None = None,
        binary_units: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(f"Compare runs {', '.join(map(str, run_ids))}")
        resize_within_screen(self, QSize(1000, 700))
        self.history = history
        self.run_ids = list(run_ids)
        self.binary_units = binary_units  # throughput in MiB/s: the app's toggle
        self.comparison: Comparison | None = None
        self.series: CompareSeries = {}
        self._stale_plots: set[str] = set()  # drawn when their tab is first shown
        self.load(baseline_id)  # read while the widgets are built

        self.heading = QLabel("Reading the runs...")
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.baseline_box = QComboBox()
        self.baseline_box.setAccessibleName("Baseline")
        self.baseline_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.baseline_box.activated.connect(lambda _i: self._baseline_picked())
        self.tabs = QTabWidget()
        self.results = Table()
        self.results.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.results.verticalHeader().hide()
        self.results.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.more_passes = QWidget()  # "can't tell": offers to run a benchmark again
        self.more_passes_row = QHBoxLayout(self.more_passes)
        self.more_passes_row.setContentsMargins(0, 0, 0, 0)
        self.more_passes_note = QLabel()
        self.more_passes_note.setWordWrap(True)
        self.more_passes_row.addWidget(self.more_passes_note, 1)
        self.more_passes_buttons: list[QPushButton] = []
        self.more_passes.hide()
        results_page = QWidget()
        results_layout = QVBoxLayout(results_page)
        results_layout.addWidget(self.results, 1)
        results_layout.addWidget(self.legend)
        results_layout.addWidget(self.more_passes)
        self.tabs.addTab(results_page, "Results")
        self.phase_box = QComboBox()
        self.phase_box.setAccessibleName("Phase")
        self.phase_box.currentIndexChanged.connect(lambda _i: self._draw_series())
        self.series_plot = pg.PlotWidget()
        # with its unit, pyqtgraph writes "(ms)" for a short phase, not a bare "(x0.001)"
        self.series_plot.setLabel("bottom", "time since the phase's first sample", units="s")
        self.series_plot.setLabel("left", "engine throughput", units=self._throughput_unit())
        self.series_plot.getAxis("left").enableAutoSIPrefix(False)  # never "kMB/s"
        self.series_plot.addLegend(offset=(-10, 10))
        self.series_plot.showGrid(x=True, y=True, alpha=0.25)
        series_page = QWidget()
        series_layout = QVBoxLayout(series_page)
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase"))
        row.addWidget(self.phase_box, 1)
        series_layout.addLayout(row)
        series_layout.addWidget(self.series_plot, 1)
        # runs that logged latency: their p99 per interval, on a log scale
        self.latency_plot = pg.PlotWidget(axisItems={"left": LatencyAxis("left")})
        self.latency_plot.setLogMode(x=False, y=True)
        self.latency_plot.getAxis("left").setStyle(maxTextLevel=0)
        self.latency_plot.setLabel("left", "interval p99")
        self.latency_plot.addLegend(offset=(-10, 10))
        self.latency_plot.hide()
        series_layout.addWidget(self.latency_plot, 1)
        self.series_note = QLabel()
        self.series_note.setWordWrap(True)
        series_layout.addWidget(self.series_note)
        self.series_index = self.tabs.addTab(series_page, "Over time")
        self.context = QTreeWidget()
        self.context.setRootIsDecorated(True)
        self.context.setAlternatingRowColors(True)
        self.tabs.addTab(self.context, "What differs")
        self.sweep_box = QComboBox()
        self.sweep_box.setAccessibleName("Figure against the parameter")
        self.sweep_box.currentIndexChanged.connect(lambda _i: self._draw_sweep())
        self.sweep_plot = pg.PlotWidget()
        self.sweep_plot.showGrid(x=True, y=True, alpha=0.25)
        self.sweep_table = Table()
        self.sweep_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.sweep_table.verticalHeader().hide()
        sweep_page = QWidget()
        sweep_layout = QVBoxLayout(sweep_page)
        sweep_layout.addWidget(self.sweep_box)
        sweep_layout.addWidget(self.sweep_plot, 3)
        sweep_layout.addWidget(self.sweep_table, 2)
        self.sweep_index = self.tabs.addTab(sweep_page, "Against the parameter")

        self.save_buttons: dict[str, QPushButton] = {}
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Baseline"))
        buttons.addWidget(self.baseline_box)
        buttons.addStretch(1)
        for key, text in (
            ("csv", "Export CSV..."),
            ("json", "Export JSON..."),
            ("html", "HTML Report..."),
            ("plot", "Save Plot..."),
        ):
            button = QPushButton(text)
            button.setEnabled(False)
            button.clicked.connect(self._saver(key))
            buttons.addWidget(button)
            self.save_buttons[key] = button
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(buttons)
        self._style_plots()
        self.tabs.currentChanged.connect(lambda _i: self._draw_visible_plot())

    # --- loading ---------------------------------------------------------------------------
    def load(self, baseline_id: int | None = None) -> None:
        self.history.compare(self.run_ids, baseline_id, self._on_loaded)

    def _on_loaded(self, outcome: tuple[Comparison, CompareSeries]) -> None:
        if not shiboken6.isValid(self):
            return  # closed (and deleted) while the runs were read
        self.comparison, self.series = outcome
        self._show()
        self.loaded.emit()

    def _baseline_picked(self) -> None:
        wanted = self.baseline_box.currentData()
        if self.comparison is not None and wanted != self.baseline_id:
            # the same runs judged against another: no need to read them (or their samples)
            # again; the statistics over at most 8 runs take well under a millisecond
            self.comparison = compare_runs(self.comparison.runs, int(wanted))
            self._show()
            self.loaded.emit()

    @property
    def baseline_id(self) -> int | None:
        if self.comparison is None:
            return None
        return self.comparison.runs[self.comparison.baseline_index].summary.id

    def set_binary_units(self, mib: bool) -> None:
        """Throughput in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s), as the app's toggle."""
        if mib == self.binary_units:
            return
        self.binary_units = mib
        self.series_plot.setLabel("left", "engine throughput", units=self._throughput_unit())
        if self.comparison is not None:
            self._show()

    def _throughput_unit(self) -> str:
        return shown_unit("MB/s", self.binary_units)[1]

    def run_label(self, index: int, full: bool = False) -> str:
        assert self.comparison is not None
        return self.comparison.run_label(index, full)

    # --- showing ---------------------------------------------------------------------------
    def _show(self) -> None:
        c = self.comparison
        assert c is not None
        lines = []
        for index, detail in enumerate(c.runs):
            run = detail.summary
            colour = run_colour(index)
            mark = " <b>(baseline)</b>" if index == c.baseline_index else ""
            said = c.told_apart[index]
            told = f" <b>{html.escape(said)}</b>" if said else ""
            lines.append(
                f'<span style="color:{colour}">\u25a0</span> run {run.id}: '
                f"{html.escape(run.name)}{told}, "
                f"{run.host}, {run.started_at.astimezone():%Y-%m-%d %H:%M}{mark}"
            )
        self.heading.setText("<br>".join(lines))
        self.baseline_box.blockSignals(True)
        self.baseline_box.clear()
        for index, detail in enumerate(c.runs):
            self.baseline_box.addItem(self.run_label(index), detail.summary.id)
        self.baseline_box.setCurrentIndex(c.baseline_index)
        self.baseline_box.blockSignals(False)
        self._fill_results()
        fit_width(self, self.results)
        self._fill_more_passes()
        self._fill_context()
        phases = phase_order(
            [row.phase for row in c.rows]
            + [p for by_phase in self.series.values() for p in by_phase]
        )
        current = self.phase_box.currentText()
        self.phase_box.blockSignals(True)
        self.phase_box.clear()
        self.phase_box.addItems(phases)
        if current in phases:
            self.phase_box.setCurrentText(current)
        self.phase_box.blockSignals(False)
        self._fill_sweep()
        self._stale_plots = {"series", "sweep"}
        self._draw_visible_plot()
        for button in self.save_buttons.values():
            button.setEnabled(True)

    def _fill_results(self) -> None:
        c = self.comparison
        assert c is not None
        fill_results(self.results, c, self.run_label, self.binary_units)
        for index in range(len(c.runs)):  # columns Phase, Figure, then the runs
            header = self.results.horizontalHeaderItem(2 + index)
            if header is not None:
                header.setToolTip(self.run_label(index, full=True))
        self.legend.setText(legend_text(c))

    def _fill_more_passes(self) -> None:
        """One button per measured run whose passes were too few for a verdict."""
        c = self.comparison
        assert c is not None
        for button in self.more_passes_buttons:
            self.more_passes_row.removeWidget(button)
            button.deleteLater()
        self.more_passes_buttons = []
        specs = {i: spec for i, run in enumerate(c.runs) if (spec := run.spec) is not None}
        short = {i: n for i, n in short_of_passes(c).items() if i in specs}
        self.more_passes.setVisible(bool(short))
        if not short:
            return
        fewest = min(short.values())
        self.more_passes_note.setText(
            f"Can't tell from {count_noun(fewest, 'pass')}: run the benchmark again with "
            f"{count_noun(MIN_PASSES, 'pass')} (it opens on the Benchmark page, set up as the run "
            "was), then compare the new runs."
        )
        for index in short:
            run = c.runs[index]
            button = QPushButton(f"Run #{run.summary.id} with {count_noun(MIN_PASSES, 'pass')}...")
            button.setToolTip(
                f"{run.summary.name}: its benchmark, {count_noun(MIN_PASSES, 'repetition')}"
            )
            button.clicked.connect(self._rerun(specs[index]))
            self.more_passes_row.addWidget(button)
            self.more_passes_buttons.append(button)

    def _rerun(self, spec: BenchSpec) -> Callable[[], None]:
        return lambda: self.rerunRequested.emit(spec, MIN_PASSES)

    def _fill_context(self) -> None:
        c = self.comparison
        assert c is not None
        self.context.clear()
        self.context.setColumnCount(1 + len(c.runs))
        self.context.setHeaderLabels(["Setting"] + [self.run_label(i) for i in range(len(c.runs))])
        header_item = self.context.headerItem()
        for index in range(len(c.runs)):
            header_item.setToolTip(1 + index, self.run_label(index, full=True))
        groups: dict[str, QTreeWidgetItem] = {}
        for difference in c.context:
            parent = groups.get(difference.group)
            if parent is None:
                parent = QTreeWidgetItem([difference.group])
                font = parent.font(0)
                font.setBold(True)
                parent.setFont(0, font)
                self.context.addTopLevelItem(parent)
                groups[difference.group] = parent
            texts = [setting_text(difference.key, v) for v in difference.values]
            item = QTreeWidgetItem([setting_label(difference.key), *texts])
            item.setToolTip(0, difference.key)  # the key the CLI's --json and exports use
            for column, text in enumerate(texts, 1):
                item.setToolTip(column, text)  # a long value is cut at its column's edge
            parent.addChild(item)
        if not c.context:
            self.context.addTopLevelItem(
                QTreeWidgetItem(["Nothing recorded about the runs' context differs."])
            )
        self.context.expandAll()
        self._fit_context_columns()

    def _fit_context_columns(self) -> None:
        """Each run's column as wide as its values, its header cut at _MAX_HEADER_PX (the
        tooltip names the run in full): a long run name no longer pushes the next run out of
        sight."""
        header = self.context.header()
        self.context.resizeColumnToContents(0)
        for column in range(1, self.context.columnCount()):
            values = self.context.sizeHintForColumn(column)
            title = min(header.sectionSizeHint(column), _MAX_HEADER_PX)
            header.resizeSection(column, max(values, title))

    def _draw_visible_plot(self) -> None:
        """Curves are made for the tab on show only: most comparisons are read as a table."""
        page = {self.series_index: "series", self.sweep_index: "sweep"}.get(
            self.tabs.currentIndex()
        )
        if page in self._stale_plots:
            self._stale_plots.discard(page)
            if page == "series":
                self._draw_series()
            else:
                self._draw_sweep()

    def _draw_series(self) -> None:
        c = self.comparison
        self.series_plot.clear()
        if c is None:
            return
        phase = self.phase_box.currentText()
        scale = shown_unit("MB/s", self.binary_units)[0]
        draw_series(self.series_plot, c, self.series, phase, self.run_label, scale)
        self.latency_plot.setVisible(draw_latency(self.latency_plot, c, phase, self.run_label))
        note = series_note(c.runs, self.series, phase)
        self.series_note.setText(
            f"{note}." if note else "Each line starts at its run's first sample of the phase."
        )

    def _fill_sweep(self) -> None:
        c = self.comparison
        assert c is not None
        self.tabs.setTabEnabled(self.sweep_index, c.sweep is not None)
        # a disabled tab says why: "the runs also differ in filesystem"
        why_not = f"No parameter to plot against: {c.no_sweep}." if c.no_sweep else ""
        self.tabs.setTabToolTip(self.sweep_index, why_not)
        self.tabs.setTabText(self.sweep_index, "Against the parameter")
        shown = self.sweep_box.currentIndex()  # kept when the same runs are shown again
        self.sweep_box.blockSignals(True)
        self.sweep_box.clear()
        if c.sweep is not None:
            self.tabs.setTabText(self.sweep_index, f"Against {c.sweep.label}")
            for r, row in enumerate(c.rows):
                if any(v is not None for v in row.values):
                    name = figure_name(row.metric, row.unit, self.binary_units)
                    self.sweep_box.addItem(f"{row.phase}: {name}", r)
        if 0 <= shown < self.sweep_box.count():
            self.sweep_box.setCurrentIndex(shown)
        self.sweep_box.blockSignals(False)
        self._fill_sweep_table()

    def _draw_sweep(self) -> None:
        c = self.comparison
        self.sweep_plot.clear()
        if c is None or c.sweep is None or self.sweep_box.count() == 0:
            return
        row = c.rows[int(self.sweep_box.currentData())]
        draw_sweep(self.sweep_plot, c.sweep, row, self.binary_units)

    def _fill_sweep_table(self) -> None:
        c = self.comparison
        assert c is not None
        fill_sweep_table(self.sweep_table, c, self.binary_units)

    def _style_plots(self) -> None:
        base = self.palette().color(QPalette.ColorRole.Base)
        text = self.palette().color(QPalette.ColorRole.Text)
        for plot in (self.series_plot, self.sweep_plot, self.latency_plot):
            without_export(plot)
            plot.setBackground(base)
            for axis in ("left", "bottom"):
                plot.getAxis(axis).setTextPen(text)
                plot.getAxis(axis).setPen(text)
        # the palette's text in either theme: pyqtgraph's own grey is faint on white
        for plot in (self.series_plot, self.latency_plot):
            plot.getPlotItem().legend.setLabelTextColor(text)

    # --- saving ----------------------------------------------------------------------------
    def _saver(self, key: str) -> Callable[[], None]:
        return lambda: self.ask_save(key)

    def ask_save(self, key: str) -> None:
        suggested = f"comparison-{'-'.join(map(str, self.run_ids))}"
        if key == "plot":
            path = ask_path(self, suggested)
            if path is not None:
                self.save(key, path)
            return
        filters = {"csv": "CSV (*.csv)", "json": "JSON (*.json)", "html": "HTML report (*.html)"}
        chosen = file_places.chosen(
            QFileDialog.getSaveFileName(
                self,
                SAVE_COMPARISON[key],
                file_places.suggested(f"{suggested}.{key}"),
                filters[key],
            )[0]
        )
        if chosen:
            self.save(key, Path(chosen))

    def current_plot(self) -> pg.PlotWidget:
        return self.sweep_plot if self.tabs.currentIndex() == self.sweep_index else self.series_plot

    def save(self, key: str, path: Path) -> None:
        """Writes the comparison (csv, json, html) or the plot on show (png, svg by suffix)."""
        c = self.comparison
        if c is None:
            return
        if key == "plot":
            try:
                save_widget(self.current_plot(), path, self.windowTitle())
            except OSError as exc:
                self.saved.emit(f"could not write {path}: {exc}")
                return
            self.saved.emit(f"written to {path}")
            return
        self.history.write_comparison(key, c, self.series, path, self._on_saved)

    def _on_saved(self, message: str) -> None:
        if shiboken6.isValid(self):
            self.heading.setToolTip(message)
            self.saved.emit(message)
