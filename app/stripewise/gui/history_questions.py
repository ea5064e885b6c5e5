"""What the History page asks before it changes runs: a new name, tags, notes, whether to
delete. Each returns the answer, or None when the user cancels; the page files it."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from stripewise.gui import help_dialogs as says
from stripewise.model.run import RunSummary
from stripewise.model.wording import count_noun


def ask_name(parent: QWidget, run: RunSummary) -> str | None:
    name, ok = QInputDialog.getText(
        parent,
        "Rename Run",
        says.with_purpose(says.rename_run(run.id), "Name:"),
        text=run.name,
    )
    return name if ok and name.strip() else None


def ask_tags(parent: QWidget, runs: list[RunSummary]) -> dict[int, list[str]] | None:
    """Each run's new tags: the ones all the runs share are offered for editing, the others
    each run keeps."""
    shared = [t for t in runs[0].tags if all(t in r.tags for r in runs)]
    text, ok = QInputDialog.getText(
        parent,
        "Tags",
        says.with_purpose(says.tag_runs([r.id for r in runs]), "Tags, separated by commas:"),
        text=", ".join(shared),
    )
    if not ok:
        return None
    wanted = [t.strip() for t in text.split(",") if t.strip()]
    return {run.id: [*(t for t in run.tags if t not in shared), *wanted] for run in runs}


def ask_notes(parent: QWidget, run: RunSummary) -> str | None:
    text, ok = QInputDialog.getMultiLineText(
        parent, "Notes", says.with_purpose(says.note_run(run.id), "Notes:"), run.notes
    )
    return text if ok else None


def confirm_delete(parent: QWidget, ids: list[int]) -> bool:
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Delete runs")
    box.setText(f"Delete {count_noun(len(ids), 'run')} ({', '.join(map(str, ids))})?")
    box.setInformativeText(says.DELETE_RUNS)
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Yes
