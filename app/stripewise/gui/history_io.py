"""File > Import Results... and the History page's Export...: file choosers around the
history service, which reads, parses and writes off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.model.wording import count_noun
from stripewise.output_files import EXPORT_SUFFIXES
from stripewise.services.history import HistoryService

IMPORT_FILTERS = (
    "Benchmark results (*.csv *.txt *.json *.out *.log);;"
    "bonnie++ CSV or table (*.csv *.txt);;fio JSON (*.json);;iozone output (*.txt *.out);;"
    "All files (*)"
)
EXPORT_KINDS = {
    "HTML report (*.html)": "html",
    "CSV (*.csv)": "csv",
    "JSON (*.json)": "json",
}


def ask_import(
    parent: QWidget, history: HistoryService, on_imported: Callable[[list[int]], None]
) -> None:
    path = file_places.chosen(
        QFileDialog.getOpenFileName(
            parent, says.IMPORT_RESULTS, file_places.start_folder(), IMPORT_FILTERS
        )[0]
    )
    if path:
        import_path(parent, history, Path(path), on_imported)


def import_path(
    parent: QWidget,
    history: HistoryService,
    path: Path,
    on_imported: Callable[[list[int]], None],
) -> None:
    """The format is recognised from the content; an error names the file and line."""

    def refused(message: str) -> None:
        QMessageBox.warning(parent, "Import results", f"Nothing was imported.\n\n{message}")

    def imported(run_ids: list[int], warnings: list[str]) -> None:
        on_imported(run_ids)
        if warnings:
            skipped = "\n".join(warnings)
            QMessageBox.information(
                parent,
                "Import results",
                f"Imported {count_noun(len(run_ids), 'run')}; parts of {path.name} could not be "
                f"read and were skipped:\n\n{skipped}",
            )

    history.import_file(path, "auto", None, imported, refused)


def ask_export(
    parent: QWidget,
    history: HistoryService,
    run_ids: list[int],
    on_written: Callable[[str], None],
) -> None:
    if not run_ids:
        return
    stem = f"run-{run_ids[0]}" if len(run_ids) == 1 else f"comparison-{'-'.join(map(str, run_ids))}"
    path, chosen = QFileDialog.getSaveFileName(
        parent,
        says.export_runs(run_ids),
        file_places.suggested(f"{stem}.html"),
        ";;".join(EXPORT_KINDS),
    )
    file_places.chosen(path)
    if path:
        kind, target = export_kind(Path(path), chosen)
        history.write_runs(kind, run_ids, target, on_written)


def export_kind(path: Path, chosen: str) -> tuple[str, Path]:
    """What to write, and where: the suffix typed decides, as in `history export -o` (Qt
    always returns a filter, so "run.csv" under the HTML filter is a CSV); without a known
    one, the filter chosen, its suffix added."""
    kind = EXPORT_SUFFIXES.get(path.suffix.lower())
    if kind is not None:
        return kind, path
    kind = EXPORT_KINDS.get(chosen, "html")
    return kind, path.with_name(f"{path.name}.{kind}")
