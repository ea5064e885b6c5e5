"""The Experiment page's access to the experiments the history keeps: listed, read back,
exported, trashed and restored with their runs, and two compared, all off the GUI thread.

Reads run in the background as HistoryService's do; trash and restore go through the
history's serial writer, then the runs are listed again (the History page shows them moved).
A kept experiment comes with what Apply needs (`Prepared`): its design, its starting settings
as measured, and which of its devices are md arrays (read from /sys here, not on the GUI thread).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, Signal

from stripewise.history.experiment_compare import (
    ComparedValue,
    NotComparableError,
    change_text,
    comparable,
    compare_results,
    differences_text,
)
from stripewise.history.experiment_export import export_experiment
from stripewise.history.experiments import (
    ExperimentSummary,
    StoredExperiment,
    delete_experiment,
    get_experiment,
    list_experiments,
    restore_experiment,
)
from stripewise.model.experiment_result import Verdict
from stripewise.output_files import OutputFileError, write_output
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.experiment_setup import Prepared
from stripewise.services.history import HistoryService
from stripewise.services.tasks import run_in_background
from stripewise.system.block_tunables import Tree

__all__ = [
    "ComparedValue",
    "ExperimentHistory",
    "ExperimentSummary",
    "KeptComparison",
    "KeptExperiment",
    "StoredExperiment",
    "change_text",
]


@dataclass(frozen=True)
class KeptExperiment:
    stored: StoredExperiment
    setup: Prepared | None  # what Apply takes: None unless the verdict is better


@dataclass(frozen=True)
class KeptComparison:
    first: StoredExperiment
    second: StoredExperiment
    rows: tuple[ComparedValue, ...]  # the second against the first, value by value

    @property
    def minimised(self) -> bool:
        assert self.first.result is not None  # compared: both have a result
        return self.first.result.objective.metric.minimised

    @property
    def differences(self) -> str:
        """What the two benchmarks did differently, in a sentence; empty when nothing."""
        return differences_text(self.first, self.second)


def kept_setup(stored: StoredExperiment, tree: Tree | None = None) -> Prepared | None:
    """A better verdict's `Prepared` as the page's run made it: the design, the starting
    settings its baseline point measured, the md arrays among its devices."""
    result = stored.result
    if result is None or result.recommendation.verdict is not Verdict.BETTER:
        return None
    base = next((p for p in result.points if p.baseline), None)
    if base is None:
        return None
    tree = tree or Tree()
    design = stored.design
    md_devices = tuple(d for d in design.devices if tree.md_level(d) is not None)
    return Prepared(
        design,
        BenchStartArgs(design.spec),
        base.values,
        None,
        md_devices,
        stored.summary.name,
    )


def _write(path: Path, text: str) -> str:
    try:
        write_output(path, text)
    except OutputFileError as exc:
        return f"could not write {path}: {str(exc).removeprefix(f'cannot write {path}: ')}"
    return f"written to {path}"


class ExperimentHistory(QObject):
    listed = Signal(list, bool)  # list[ExperimentSummary], whether the trash's
    failed = Signal(str)

    def __init__(self, history: HistoryService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history = history
        self._loads = 0  # listings started: one finishing late is not shown over a newer
        self._shown = 0
        self.trash = False  # which listing the page shows

    def load(self, trash: bool | None = None) -> None:
        """List the kept experiments (or the trash's), newest first; `listed` brings them."""
        if trash is not None:
            self.trash = trash
        db, wanted = self.history.database, self.trash
        self._loads += 1
        number = self._loads

        def shown(found: list[ExperimentSummary]) -> None:
            if shiboken6.isValid(self) and number > self._shown:  # not after its window closed
                self._shown = number
                self.listed.emit(found, wanted)

        run_in_background(lambda: list_experiments(db, trash=wanted), shown, self._on_failure)

    def get(self, experiment_id: int, on_done: Callable[[KeptExperiment], None]) -> None:
        db = self.history.database

        def work() -> KeptExperiment:
            stored = get_experiment(db, experiment_id)
            return KeptExperiment(stored, kept_setup(stored))

        run_in_background(work, on_done, self._on_failure)

    def export(
        self, experiment_id: int, fmt: str, path: Path, on_done: Callable[[str], None]
    ) -> None:
        """HTML (with its charts), CSV or JSON to `path`; `on_done` gets what happened."""
        db = self.history.database
        run_in_background(
            lambda: _write(path, export_experiment(get_experiment(db, experiment_id), fmt)),
            on_done,
            self._on_failure,
        )

    def delete(self, experiment_id: int, on_done: Callable[[list[int]], None]) -> None:
        """To the trash with its runs; `on_done` gets the runs moved."""
        db = self.history.database
        self._change(lambda: delete_experiment(db, experiment_id), on_done)

    def restore(self, experiment_id: int, on_done: Callable[[list[int]], None]) -> None:
        """Back from the trash with its runs; `on_done` gets the runs moved."""
        db = self.history.database
        self._change(lambda: restore_experiment(db, experiment_id), on_done)

    def _change(self, work: Callable[[], list[int]], on_done: Callable[[list[int]], None]) -> None:
        def done(moved: list[int]) -> None:
            on_done(moved)
            if shiboken6.isValid(self):
                self.load()
                self.history.load_runs()

        def refused(exc: Exception) -> None:
            if shiboken6.isValid(self):
                self.failed.emit(f"not changed: {exc}")

        self.history.writer.submit(work, done, refused)

    def compare(
        self,
        first_id: int,
        second_id: int,
        on_done: Callable[[KeptComparison], None],
        on_refused: Callable[[str], None],
    ) -> None:
        """The second against the first, value by value; two that cannot be compared (other
        parameters, another metric, no result) reach `on_refused` saying why."""
        db = self.history.database

        def work() -> KeptComparison | str:
            first, second = get_experiment(db, first_id), get_experiment(db, second_id)
            try:
                comparable(first, second)
            except NotComparableError as exc:
                return str(exc)
            assert first.result is not None and second.result is not None
            return KeptComparison(
                first, second, tuple(compare_results(first.result, second.result))
            )

        def done(outcome: KeptComparison | str) -> None:
            if isinstance(outcome, str):
                on_refused(outcome)
            else:
                on_done(outcome)

        run_in_background(work, done, self._on_failure)

    def _on_failure(self, exc: Exception) -> None:
        if shiboken6.isValid(self):  # a read that ended after its window closed says nothing
            self.failed.emit(f"reading the kept experiments failed: {exc}")
