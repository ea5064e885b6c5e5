"""File dialogs start in the user's documents folder (XDG's user-dirs), then where the user last
chose, never in the program's own folder (an empty start is the working directory); a plan of a
recording is named by its host, "Arrays on backup-07", not by its file name with the suffix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from stripewise.gui import file_places
from stripewise.gui.main_window import MainWindow
from tests.gui.test_planner_machine import planner_page, window  # noqa: F401 (a fixture)


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose XDG documents folder is ~/Papers, as xdg-user-dirs writes it."""
    home = tmp_path / "home"
    papers = home / "Papers"
    papers.mkdir(parents=True)
    config = home / ".config"
    config.mkdir()
    (config / "user-dirs.dirs").write_text('XDG_DOCUMENTS_DIR="$HOME/Papers"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setattr(file_places, "_last_folder", None)
    return papers


def test_dialogs_start_in_documents_then_where_the_user_chose(
    documents: Path, tmp_path: Path
) -> None:
    assert file_places.start_folder() == str(documents)
    assert file_places.suggested("x.toml") == str(documents / "x.toml")
    elsewhere = tmp_path / "plans"
    elsewhere.mkdir()
    file_places.chosen(str(elsewhere / "mine.toml"))
    assert file_places.start_folder() == str(elsewhere)


def test_a_recordings_plan_is_saved_by_its_host_in_documents(
    window: MainWindow,  # noqa: F811 (the fixture)
    documents: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = planner_page(window)
    page.from_map.click()
    assert page.planner.plan.name == "Arrays on backup-07"
    asked: list[str] = []

    def answer(_parent: object, _caption: str, proposed: str, _filters: str) -> tuple[str, str]:
        asked.append(proposed)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    page._save()
    assert asked == [str(documents / "Arrays-on-backup-07.toml")]


def test_open_dialogs_do_not_start_in_the_working_directory(
    window: MainWindow,  # noqa: F811 (the fixture)
    documents: Path,
    monkeypatch: pytest.MonkeyPatch,
    qtbot: Any,
) -> None:
    page = planner_page(window)
    starts: list[str] = []

    def answer(_parent: object, _caption: str, start: str, _filters: str) -> tuple[str, str]:
        starts.append(start)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", answer)
    page._open()
    hardware = window.page_widgets["hardware"]
    hardware._open()  # type: ignore[attr-defined]
    assert starts == [str(documents), str(documents)]
