"""Compare of imported bonnie++ runs: a `-x 3` series is judged; a one-line import, which
cannot be run again, is told how to get passes, and offered no benchmark to run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripewise.history.database import open_database
from stripewise.history.imports import import_file
from tests.gui.conftest import WindowFactory
from tests.gui.test_compare_view import cell, open_comparison


def _imported(url: str, tmp_path: Path, *reads: tuple[int, ...]) -> list[int]:
    """A 1.0x CSV file per tuple of block read figures (a -x series when more than one)."""
    ids = []
    with open_database(url) as db:
        for n, passes in enumerate(reads):
            path = tmp_path / f"server{n}.csv"
            path.write_text(
                "".join(f"Server,5000M,,,185344,88,60416,30,,,{r},80,301.2,1\n" for r in passes)
            )
            ids += import_file(db, path)
    return ids


def test_imported_single_passes_are_told_to_import_a_series(
    make_window: WindowFactory, db_url: str, qtbot: Any, tmp_path: Path
) -> None:
    ids = _imported(db_url, tmp_path, (163840,), (229376,))
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    try:
        assert cell(compare, "Throughput (MB/s)", 3).toolTip().startswith("can't tell: 1 pass")
        legend = compare.legend.text()
        assert "an imported run cannot be run again: import the output of bonnie++ -x 3" in legend
        assert "bench" not in legend
        assert not compare.more_passes.isVisibleTo(compare)  # no run it could set up
    finally:
        compare.close()


def test_an_imported_series_is_judged(
    make_window: WindowFactory, db_url: str, qtbot: Any, tmp_path: Path
) -> None:
    ids = _imported(db_url, tmp_path, (163840, 164864, 162816), (229376, 261120, 245760))
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    try:
        table = compare.results
        [row] = [
            r
            for r in range(table.rowCount())
            if (table.item(r, 0).text(), table.item(r, 1).text())
            == ("seq_read", "Throughput (MB/s)")
        ]
        judged = table.item(row, 3)  # the second run's block reads, 3 passes against 3
        assert judged.toolTip().startswith("better"), judged.toolTip()
        assert "cannot be run again" not in compare.legend.text()
    finally:
        compare.close()
