"""Compare of imported bonnie++ runs: a `-x 3` series is judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripewise.history.database import open_database
from stripewise.history.imports import import_file
from tests.gui.conftest import WindowFactory
from tests.gui.test_compare_view import open_comparison


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
    finally:
        compare.close()
