"""What the GUI does at start when the history database cannot be used."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from stripewise.gui.app import open_history
from stripewise.history.database import open_database, path_to_url


def answer_dialogs(*choices: Callable[[QMessageBox], None]) -> list[str]:
    """Answers the next modal message boxes in order; returns their texts."""
    seen: list[str] = []
    pending = list(choices)

    def poll() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.isVisible():
            seen.append(box.text())
            pending.pop(0)(box)
        if pending:
            QTimer.singleShot(20, poll)

    QTimer.singleShot(20, poll)
    return seen


def click(label: str) -> Callable[[QMessageBox], None]:
    def press(box: QMessageBox) -> None:
        button = next(b for b in box.buttons() if b.text().replace("&", "") == label)
        button.click()

    return press


def test_corrupt_database_is_moved_aside_on_request(qapp, tmp_path: Path) -> None:
    bad = tmp_path / "history.db"
    garbage = b"\x00not a database\x00" * 256
    bad.write_bytes(garbage)
    texts = answer_dialogs(click("Move Aside and Start Fresh"), click("OK"))
    service = open_history(path_to_url(bad), interactive=True)
    try:
        assert service is not None and service.schema_revision is not None
        assert str(bad) in texts[0]
        kept = [p for p in tmp_path.iterdir() if p.name.startswith("history.db.corrupt-")]
        assert len(kept) == 1 and kept[0].read_bytes() == garbage
        assert kept[0].name in texts[1]
    finally:
        if service is not None:
            service.close()


def test_corrupt_database_is_kept_when_the_user_declines(qapp, tmp_path: Path) -> None:
    bad = tmp_path / "history.db"
    bad.write_bytes(b"garbage" * 1000)
    answer_dialogs(click("Close"))
    assert open_history(path_to_url(bad), interactive=True) is None
    assert bad.read_bytes() == b"garbage" * 1000
    assert [p.name for p in tmp_path.iterdir()] == ["history.db"]


def test_newer_schema_is_refused_and_untouched(qapp, tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    open_database(path_to_url(path)).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.close()
    before = path.read_bytes()
    texts = answer_dialogs(click("OK"))
    assert open_history(path_to_url(path), interactive=True) is None
    assert "9999" in texts[0]
    assert path.read_bytes() == before
