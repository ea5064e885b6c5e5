"""What a run on several hosts drives on the Benchmark page: its form, buttons, progress line,
warnings, plot and result stacks and saved-run row.

Typed here rather than by importing the page, which builds the group view (`group_run`): the
page satisfies this structurally, and the group view needs nothing else of it.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QTimer, SignalInstance
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStackedWidget

from stripewise.gui.bench_form import BenchForm
from stripewise.gui.bench_plots import LivePlots
from stripewise.gui.bench_results import ResultsTable
from stripewise.gui.elided_label import ElidedLabel
from stripewise.gui.experiment_pass_note import ExperimentPassNote
from stripewise.services.bench_session import BenchSession
from stripewise.services.history import HistoryService


class BenchPageParts(Protocol):
    session: BenchSession  # a run on this machine holds the hosts' row as it holds the form
    history: HistoryService
    form: BenchForm
    plots: LivePlots  # this machine's: swapped out of the stacks while hosts run
    results: ResultsTable
    plot_stack: QStackedWidget
    result_stack: QStackedWidget
    start_button: QPushButton
    cancel_button: QPushButton
    open_button: QPushButton
    compare_button: QPushButton
    progress: QProgressBar
    phase_label: QLabel
    warnings: QLabel
    saved_label: ElidedLabel
    redraw: QTimer
    saved_run_id: int | None
    target_path: str  # what Compare with Previous looks for
    experiment_running: bool  # its passes run here: Start stays off until it ends
    pass_note: ExperimentPassNote  # in the form's place meanwhile: what the pass runs

    @property
    def statusMessage(self) -> SignalInstance: ...
