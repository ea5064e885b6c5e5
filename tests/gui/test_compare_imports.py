"""Imported runs in the comparison window: an import's CPU of one process apart from a
measured run's share of all CPUs, and iozone's settings one row each by the form's names."""

from __future__ import annotations

from typing import Any

from stripewise.gui.compare_view import CompareWindow
from stripewise.history.database import open_database
from stripewise.history.imports import import_file
from tests.gui.conftest import WindowFactory
from tests.importers.fixtures import FIXTURES
from tests.test_cli_history_compare_imports import measured_read


def imported(db_url: str, name: str) -> list[int]:
    db = open_database(db_url)
    try:
        return import_file(db, FIXTURES / name)
    finally:
        db.close()


def compare(make_window: WindowFactory, qtbot: Any, ids: list[int]) -> CompareWindow:
    window = make_window(view="history")
    compared = window.compare_runs(ids)
    qtbot.waitUntil(lambda: compared.comparison is not None, timeout=10_000)
    return compared


def test_an_imports_cpu_has_a_row_of_its_own(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = [measured_read(db_url), *imported(db_url, "fio_two_jobs.json")]
    compared = compare(make_window, qtbot, ids)
    table = compared.results
    rows = {
        (table.item(r, 0).text(), table.item(r, 1).text()): [
            table.item(r, c).text() for c in (2, 3)
        ]
        for r in range(table.rowCount())
    }
    assert rows["seq_read", "CPU (%)"][0] == "40.0"
    assert not rows["seq_read", "CPU (%)"][1].startswith("62")
    own = rows["seq_read", "CPU of the tool's process (% of one CPU)"]
    assert own[1].startswith("62.1") and "%" not in own[1], own
    assert not rows["seq_read", "Efficiency (KB/s per CPU %)"][1][:1].isdigit()
    compared.close()


def test_iozone_sizes_are_one_row_each(make_window: WindowFactory, db_url: str, qtbot: Any) -> None:
    ids = [*imported(db_url, "iozone_auto.txt"), imported(db_url, "iozone_throughput.txt")[0]]
    compared = compare(make_window, qtbot, ids)
    tree = compared.context
    rows = {
        tree.topLevelItem(g).child(i).text(0): [
            tree.topLevelItem(g).child(i).text(c) for c in (1, 2)
        ]
        for g in range(tree.topLevelItemCount())
        for i in range(tree.topLevelItem(g).childCount())
    }
    assert rows["Block size (iozone -r)"] == ["4 KiB to 512 KiB (8 sizes)", "4 KiB"]
    assert rows["File size (iozone -s)"] == ["64 KiB to 512 KiB (4 sizes)", "512 KiB"]
    assert rows["iozone: Auto Mode"] == ["yes", "-"]
    assert not [name for name in rows if "_kB" in name or name.startswith(("options", "file_"))]
    compared.close()
