"""The GUI's access to the history database: opened once, queried off the GUI thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from stripewise.history import database
from stripewise.history.database import (
    CorruptDatabaseError,
    DatabaseError,
    NewerSchemaError,
)
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunSummary
from stripewise.services.tasks import run_in_background

__all__ = [
    "CorruptDatabaseError",
    "DatabaseError",
    "HistoryService",
    "NewerSchemaError",
    "move_aside",
    "resolve_url",
]


def resolve_url(cli_url: str | None) -> str:
    return database.resolve_database_url(cli_url)


def move_aside(path: Path) -> Path:
    return database.move_aside(path)


class HistoryService(QObject):
    """Owns the open database. Reads run in the background and arrive as signals."""

    runsLoaded = Signal(list)  # list[RunSummary]
    failed = Signal(str)

    def __init__(self, db: database.Database, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._store = HistoryStore(db)
        self.runs: list[RunSummary] | None = None

    @classmethod
    def open(cls, url: str, parent: QObject | None = None) -> HistoryService:
        """Open and migrate; raises DatabaseError subclasses for the GUI to explain."""
        return cls(database.open_database(url), parent)

    @property
    def display_url(self) -> str:
        return database.display_url(self._db.url)

    @property
    def sqlite_path(self) -> Path | None:
        return self._db.sqlite_path

    @property
    def schema_revision(self) -> str | None:
        return self._db.schema_revision

    @property
    def backup_path(self) -> Path | None:
        return self._db.backup_path

    def load_runs(self) -> None:
        run_in_background(self._store.list_runs, self._on_runs, self._on_failure)

    def _on_runs(self, runs: list[RunSummary]) -> None:
        self.runs = runs
        self.runsLoaded.emit(runs)

    def _on_failure(self, exc: Exception) -> None:
        self.failed.emit(f"reading the history failed: {exc}")

    def slot_labels(self, host_key: str) -> dict[str, str]:
        """Small and indexed: read on the worker that builds the inventory."""
        from stripewise.history.labels import SlotLabelStore

        return SlotLabelStore(self._db).labels(host_key)

    def set_slot_label(self, host_key: str, slot_key: str, label: str | None) -> None:
        from stripewise.history.labels import SlotLabelStore

        SlotLabelStore(self._db).set_label(host_key, slot_key, label)

    def measured_arrays(self, host_key: str, names: list[str], on_done: object) -> None:
        """Newest benchmark of each planned array, looked up off the GUI thread."""
        from stripewise.history.measured import measured_for_array

        db = self._db
        run_in_background(
            lambda: {n: m for n in names if (m := measured_for_array(db, host_key, n))},
            on_done,  # type: ignore[arg-type]
            self._on_failure,
        )

    def close(self) -> None:
        self._db.close()
